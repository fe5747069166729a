package io.tabula.multijvm;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import com.typesafe.config.ConfigValueFactory;
import io.tabula.actors.tablet.ReadModifyWriteRule;
import io.tabula.cluster.TabulaNode;
import io.tabula.cluster.TabulaTablets;
import io.tabula.persistence.model.Mutation;
import io.tabula.persistence.model.RowMutation;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.stream.javadsl.Sink;

/**
 * An application that hosts a Tabula node in its own actor system (the embedding test's
 * third JVM): it creates its system with its own settings and {@link TabulaNode#embeddedConfig},
 * starts the node with {@link TabulaNode#embed} (no gRPC endpoint), and once a file appears,
 * its actors write rows through {@link TabulaTablets}, read each back, increment a shared
 * counter row, and the guardian scans the whole table as a Pekko Source. It prints one
 * {@code APP RESULT} line and keeps serving its tablets until it is stopped.
 *
 * <p>Arguments: data dir, seed host:port, Management HTTP port, cluster port, go file, table.
 */
public final class EmbeddingApp {
  static final int WRITERS = 3;
  static final int ROWS_PER_WRITER = 100;

  private EmbeddingApp() {}

  /** The guardian's messages. */
  sealed interface Msg {}

  record Start(TabulaTablets tablets) implements Msg {}

  record Poll() implements Msg {}

  record WriterDone(int written, int readBack) implements Msg {}

  record Scanned(long rows, String counter) implements Msg {}

  record Failed(Throwable error) implements Msg {}

  public static void main(String[] args) {
    Config own = ConfigFactory.parseMap(Map.of(
        "tabula.node.name", "app",
        "tabula.node.host", "127.0.0.1",
        "tabula.node.data-dir", args[0],
        "tabula.node.http-port", Integer.parseInt(args[2]),
        "tabula.node.cluster-port", Integer.parseInt(args[3]),
        "tabula.node.serve-grpc", false))
        .withValue("tabula.node.join", ConfigValueFactory.fromIterable(List.of(args[1])));
    Path go = Path.of(args[4]);
    String table = args[5];
    ActorSystem<Msg> system = ActorSystem.create(guardian(go, table), "tabula", TabulaNode.embeddedConfig(own));
    TabulaNode node = TabulaNode.embed(system);
    System.out.println("APP STARTED as node " + node.settings().name());
    system.tell(new Start(node.tablets()));
  }

  private static Behavior<Msg> guardian(Path go, String table) {
    return Behaviors.setup(ctx -> Behaviors.withTimers(timers -> Behaviors.receive(Msg.class)
        .onMessage(Start.class, s -> {
          timers.startTimerWithFixedDelay(new Poll(), Duration.ofMillis(200));
          return waiting(s.tablets(), go, table);
        })
        .build()));
  }

  private static Behavior<Msg> waiting(TabulaTablets tablets, Path go, String table) {
    return Behaviors.setup(ctx -> Behaviors.receive(Msg.class)
        .onMessage(Poll.class, p -> {
          if (!Files.exists(go)) {
            return Behaviors.same();
          }
          for (int w = 0; w < WRITERS; w++) {
            ctx.spawn(writer(tablets, table, w, ctx.getSelf()), "writer-" + w);
          }
          return collecting(tablets, table, 0, 0, 0);
        })
        .build());
  }

  private static Behavior<Msg> collecting(TabulaTablets tablets, String table, int done, int written, int readBack) {
    return Behaviors.setup(ctx -> Behaviors.receive(Msg.class)
        .onMessage(Poll.class, p -> Behaviors.same())
        .onMessage(WriterDone.class, d -> {
          if (done + 1 < WRITERS) {
            return collecting(tablets, table, done + 1, written + d.written(), readBack + d.readBack());
          }
          ctx.pipeToSelf(tablets.scan(table, new byte[0], new byte[0]).runWith(Sink.fold(0L, (n, r) -> n + 1),
              ctx.getSystem()).thenCompose(n -> tablets.readRow(table, bytes("app-counter")).thenApply(c ->
              new Scanned(n, c.map(r -> Long.toString(java.nio.ByteBuffer.wrap(r.cells().get(0).value()).getLong()))
                  .orElse("none")))), (s, err) -> err == null ? s : new Failed(err));
          int w = written + d.written();
          int r = readBack + d.readBack();
          return Behaviors.receive(Msg.class)
              .onMessage(Poll.class, p -> Behaviors.same())
              .onMessage(Scanned.class, s -> {
                System.out.println("APP RESULT wrote=" + w + " readBack=" + r + " scanned=" + s.rows() + " counter="
                    + s.counter());
                return Behaviors.same();
              })
              .onMessage(Failed.class, f -> fail(f.error()))
              .build();
        })
        .onMessage(Failed.class, f -> fail(f.error()))
        .build());
  }

  private static Behavior<Msg> fail(Throwable e) {
    System.out.println("APP FAILED " + e);
    e.printStackTrace(System.out);
    return Behaviors.same();
  }

  /** A writer: its rows one after another through the typed API, each read back, then one increment. */
  private static Behavior<Msg> writer(TabulaTablets tablets, String table, int w, ActorRef<Msg> report) {
    return Behaviors.setup(ctx -> {
      ctx.pipeToSelf(writeAll(tablets, table, w), (n, err) -> err == null ? new WriterDone(n[0], n[1])
          : new Failed(err));
      return Behaviors.receive(Msg.class)
          .onMessage(WriterDone.class, d -> {
            report.tell(d);
            return Behaviors.stopped();
          })
          .onMessage(Failed.class, f -> {
            report.tell(f);
            return Behaviors.stopped();
          })
          .build();
    });
  }

  private static java.util.concurrent.CompletionStage<int[]> writeAll(TabulaTablets tablets, String table, int w) {
    java.util.concurrent.CompletionStage<int[]> chain = java.util.concurrent.CompletableFuture.completedFuture(
        new int[2]);
    for (int i = 0; i < ROWS_PER_WRITER; i++) {
      // Keys k0.. k5: every tablet of the test's table gets some, wherever it is served.
      String key = String.format("k%d-app-%d-%03d", i % 6, w, i);
      String value = "a" + w + "-" + i;
      chain = chain.thenCompose(n -> tablets.mutate(table, RowMutation.of(bytes(key),
          new Mutation.SetCell("f", bytes("q"), 1000, bytes(value))))
          .thenCompose(ok -> tablets.readRow(table, bytes(key)))
          .thenApply(row -> {
            n[0]++;
            if (row.isPresent() && new String(row.get().cells().get(0).value(), StandardCharsets.UTF_8).equals(value)) {
              n[1]++;
            }
            return n;
          }));
    }
    return chain.thenCompose(n -> tablets.readModifyWrite(table, bytes("app-counter"),
        List.of(new ReadModifyWriteRule.Increment("f", bytes("c"), 1))).thenApply(r -> n));
  }

  private static byte[] bytes(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }
}
