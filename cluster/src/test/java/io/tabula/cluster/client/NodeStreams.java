package io.tabula.cluster.client;

import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.stream.snapshot.LogicSnapshot;
import org.apache.pekko.stream.snapshot.MaterializerState;
import org.apache.pekko.stream.snapshot.RunningInterpreter;
import org.apache.pekko.stream.snapshot.StreamSnapshot;
import scala.jdk.javaapi.CollectionConverters;
import scala.jdk.javaapi.FutureConverters;

/**
 * What runs inside an in-JVM node's streams, from Pekko's materializer snapshots: a tablet
 * scan is an {@code unfoldResource} source over the engine's scanner (TabletScans), run
 * in the node's actor system, which closes the scanner when the stream ends or is cancelled;
 * a change stream is an {@code unfoldAsync} source over its reader.
 */
final class NodeStreams {
  private NodeStreams() {}

  /** How many tablet scans are running in the node now. */
  static int runningTabletScans(ActorSystem<?> system) {
    return running(system, "unfoldResourceSource");
  }

  /** Waits up to 10 s for every tablet scan to end; returns how many still run. */
  static int awaitNoTabletScan(ActorSystem<?> system) throws InterruptedException {
    return awaitNone(system, "unfoldResourceSource");
  }

  /**
   * How many change streams the node is serving now: each is an {@code unfoldAsync} source
   * over its reader (ChangeStreams), as a scan across tablets is, so this counts those too.
   */
  static int runningChangeStreams(ActorSystem<?> system) {
    return running(system, "unfoldAsync");
  }

  /** Waits up to 10 s for every change stream to end; returns how many still run. */
  static int awaitNoChangeStream(ActorSystem<?> system) throws InterruptedException {
    return awaitNone(system, "unfoldAsync");
  }

  /** How many stages whose label holds {@code label} run in the node now. */
  private static int running(ActorSystem<?> system, String label) {
    List<StreamSnapshot> streams = CollectionConverters.asJava(FutureConverters.asJava(
        MaterializerState.streamSnapshots(system.classicSystem())).toCompletableFuture().orTimeout(10,
            TimeUnit.SECONDS).join());
    int found = 0;
    for (StreamSnapshot s : streams) {
      for (RunningInterpreter i : CollectionConverters.asJava(s.activeInterpreters())) {
        for (LogicSnapshot l : CollectionConverters.asJava(i.logics())) {
          if (l.label().contains(label)) {
            found++;
          }
        }
      }
    }
    return found;
  }

  private static int awaitNone(ActorSystem<?> system, String label) throws InterruptedException {
    int running = running(system, label);
    for (int i = 0; i < 50 && running > 0; i++) {
      Thread.sleep(200);
      running = running(system, label);
    }
    return running;
  }
}
