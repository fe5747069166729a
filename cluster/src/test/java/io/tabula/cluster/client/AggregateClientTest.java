package io.tabula.cluster.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tabula.client.Aggregate;
import io.tabula.client.GcPolicy;
import io.tabula.client.MutationResult;
import io.tabula.client.RowMutation;
import io.tabula.client.TabulaClient;
import io.tabula.client.TabulaException;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The Tabula client's aggregate families (docs/aggregates.md): made and described by the
 * admin API, added to by apply and applyBatch, each application with a token of its own (so
 * applying the same mutation twice counts twice, while the node dedupes retries of one
 * application: IdempotencyTest), over a real node on 127.0.0.1.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class AggregateClientTest {
  @TempDir
  Path dir;

  private static long sum(TabulaClient client) {
    return client.readRow("counters", "r").toCompletableFuture().join().orElseThrow()
        .latest("visits", "day").orElseThrow().valueAsLong();
  }

  @Test
  void aggregateFamiliesAreMadeDescribedAndAddedTo() {
    try (InJvmNode node = InJvmNode.start(dir)) {
      TabulaClient client = node.client;
      client.admin().createTable("counters", "plain").toCompletableFuture().join();
      client.admin().createFamily("counters", "visits", GcPolicy.never(), Aggregate.SUM).toCompletableFuture().join();
      client.admin().createFamily("counters", "visitors", GcPolicy.never(), Aggregate.HLL).toCompletableFuture().join();
      assertEquals(Map.of("visits", Aggregate.SUM, "visitors", Aggregate.HLL),
          client.admin().describe("counters").toCompletableFuture().join().aggregates());

      RowMutation add = RowMutation.create("r").addToCell("visits", "day", 86_400_000_000L, 5);
      assertTrue(add.isIdempotent(), "an aggregate write is retried under its token");
      client.apply("counters", add).toCompletableFuture().join();
      client.apply("counters", add).toCompletableFuture().join();
      assertEquals(10, sum(client), "two applications of one mutation count twice");
      List<MutationResult> results = client.applyBatch("counters", List.of(add, add,
          RowMutation.create("r").addToCell("visits", "day", 86_400_000_000L, 100))).toCompletableFuture().join();
      assertTrue(results.stream().allMatch(r -> r.error().isEmpty()), results.toString());
      assertEquals(120, sum(client), "every entry of a batch is an application of its own");

      CompletionException refused = assertThrows(CompletionException.class, () -> client.apply("counters",
          RowMutation.create("r").addToCell("plain", "q", 1000, 1)).toCompletableFuture().join());
      assertTrue(refused.getCause() instanceof TabulaException t && t.getMessage().contains("add_to_cell.family_name"),
          refused.toString());
      assertThrows(IllegalArgumentException.class, () -> RowMutation.create("r").addToCell("visits", "day", -1, 1),
          "no server time for an aggregate cell");
    }
  }
}
