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
 * in the node's actor system, which closes the scanner when the stream ends or is cancelled.
 */
final class NodeStreams {
  private NodeStreams() {}

  /** How many tablet scans are running in the node now. */
  static int runningTabletScans(ActorSystem<?> system) {
    List<StreamSnapshot> streams = CollectionConverters.asJava(FutureConverters.asJava(
        MaterializerState.streamSnapshots(system.classicSystem())).toCompletableFuture().orTimeout(10,
            TimeUnit.SECONDS).join());
    int scans = 0;
    for (StreamSnapshot s : streams) {
      for (RunningInterpreter i : CollectionConverters.asJava(s.activeInterpreters())) {
        for (LogicSnapshot l : CollectionConverters.asJava(i.logics())) {
          if (l.label().contains("unfoldResourceSource")) {
            scans++;
          }
        }
      }
    }
    return scans;
  }

  /** Waits up to 10 s for every tablet scan to end; returns how many still run. */
  static int awaitNoTabletScan(ActorSystem<?> system) throws InterruptedException {
    int running = runningTabletScans(system);
    for (int i = 0; i < 50 && running > 0; i++) {
      Thread.sleep(200);
      running = runningTabletScans(system);
    }
    return running;
  }
}
