package io.tabula.multijvm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.cloud.bigtable.data.v2.BigtableDataClient;
import com.google.cloud.bigtable.data.v2.models.Query;
import com.google.cloud.bigtable.data.v2.models.Row;
import com.google.cloud.bigtable.data.v2.models.RowMutation;
import com.google.cloud.bigtable.data.v2.models.TableId;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A Pekko application hosting a Tabula node in its own actor system ({@link EmbeddingApp},
 * a JVM of its own, no gRPC endpoint) joins a two-node Tabula cluster and serves its share of
 * a table's tablets; its actors write, read back and increment rows through the typed API
 * while the official client writes through the other nodes; afterwards the official client
 * reads every row through a node that is not the application, including those of the tablets
 * the application serves.
 */
@Timeout(value = 4, unit = TimeUnit.MINUTES)
@ExtendWith(ClusterFixture.LogsOnFailure.class)
class EmbeddedNodeTest {
  private static final Pattern RESULT = Pattern.compile(
      "APP RESULT wrote=(\\d+) readBack=(\\d+) scanned=(\\d+) counter=(\\S+)");

  @Test
  void anApplicationsActorsServeTabletsAndUseTheTypedApi() throws Exception {
    try (ClusterFixture cluster = new ClusterFixture()) {
      cluster.add("n1");
      cluster.add("n2");
      Path log = cluster.root.resolve("app.log");
      Path go = cluster.root.resolve("go");
      Process app = new ProcessBuilder(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
          "-Xmx256m", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-XX:+ExitOnOutOfMemoryError",
          "-Djava.util.concurrent.ForkJoinPool.common.parallelism=2", "-cp", System.getProperty("java.class.path"),
          EmbeddingApp.class.getName(), cluster.data.toString(), NodeJvm.HOST + ":" + cluster.node("n1").clusterPort,
          Integer.toString(NodeJvm.freePort()), Integer.toString(NodeJvm.freePort()), go.toString(), "shared"))
          .redirectErrorStream(true).redirectOutput(log.toFile()).start();
      try {
        awaitLine(app, log, "Tabula node app serving", Duration.ofSeconds(90));
        // The master places a new table's tablets on the nodes it sees Up: wait until the cluster shows the app so.
        long upBy = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (!cluster.node("n1").get("/tabula/nodes").body().matches("(?s).*\"name\":\"app\",[^}]*\"state\":\"up\".*")) {
          assertTrue(System.nanoTime() < upBy, "the application's node is Up in the cluster within 30 s");
          Thread.sleep(200);
        }
        ClusterFixture.createTable(cluster.node("n1"), "shared", List.of("k1", "k2", "k3", "k4", "k5"));
        Map<String, String[]> tablets = ClusterFixture.tablets(cluster.node("n2"), "shared");
        List<String> byApp = new ArrayList<>();
        tablets.forEach((id, o) -> {
          if (o[0].equals("app")) {
            byApp.add(id);
          }
        });
        assertTrue(byApp.size() >= 1, "the application's node serves its share of the table: " + byApp);
        String nodes = cluster.node("n1").get("/tabula/nodes").body();
        assertTrue(nodes.contains("\"name\":\"app\""), "the application is a node of the cluster: " + nodes);

        try (BigtableDataClient data = ClusterFixture.data(cluster.node("n2"))) {
          for (int i = 0; i < 300; i++) {
            data.mutateRow(RowMutation.create(TableId.of("shared"), String.format("k%d-official-%03d", i % 6, i))
                .setCell("f", "q", "o" + i));
          }
        }
        Files.writeString(go, "go");
        String line = awaitLine(app, log, "APP RESULT", Duration.ofSeconds(90));
        Matcher m = RESULT.matcher(line);
        assertTrue(m.find(), line);
        int appRows = EmbeddingApp.WRITERS * EmbeddingApp.ROWS_PER_WRITER;
        assertEquals(appRows, Integer.parseInt(m.group(1)), "the application's actors wrote their rows");
        assertEquals(appRows, Integer.parseInt(m.group(2)), "and read each back through the typed API");
        assertEquals(300 + appRows + 1, Integer.parseInt(m.group(3)), "its scan saw the official client's rows, "
            + "its own and the counter row");
        assertEquals(Integer.toString(EmbeddingApp.WRITERS), m.group(4), "each writer's increment counted once");

        int official = 0;
        int fromApp = 0;
        try (BigtableDataClient data = ClusterFixture.data(cluster.node("n1"))) {
          for (Row r : data.readRows(Query.create(TableId.of("shared")))) {
            String key = r.getKey().toStringUtf8();
            official += key.contains("-official-") ? 1 : 0;
            fromApp += key.contains("-app-") ? 1 : 0;
          }
        }
        assertEquals(300, official);
        assertEquals(appRows, fromApp, "the official client reads what the application's actors wrote");
        System.out.println("embedded node test: the application served " + byApp.size() + " of " + tablets.size()
            + " tablets; " + line);
      } catch (AssertionError | RuntimeException | IOException e) {
        System.out.println("===== application log =====\n" + tail(log));
        throw e;
      } finally {
        app.destroy();
        if (!app.waitFor(60, TimeUnit.SECONDS)) {
          app.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        }
      }
    }
  }

  private static String awaitLine(Process p, Path log, String text, Duration within) throws Exception {
    long deadline = System.nanoTime() + within.toNanos();
    while (System.nanoTime() < deadline) {
      for (String l : Files.readAllLines(log)) {
        if (l.contains(text)) {
          return l;
        }
        if (l.contains("APP FAILED")) {
          throw new AssertionError("the application failed: " + l);
        }
      }
      if (!p.isAlive()) {
        throw new AssertionError("the application exited with " + p.exitValue() + " before '" + text + "'");
      }
      Thread.sleep(200);
    }
    throw new AssertionError("no '" + text + "' from the application within " + within);
  }

  private static String tail(Path log) {
    try {
      List<String> l = Files.readAllLines(log);
      return String.join("\n", l.subList(Math.max(0, l.size() - 150), l.size()));
    } catch (IOException e) {
      return "(no log: " + e + ")";
    }
  }
}
