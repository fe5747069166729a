package io.tabula.multijvm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.cloud.bigtable.admin.v2.BigtableTableAdminClient;
import com.google.cloud.bigtable.admin.v2.models.CreateTableRequest;
import com.google.cloud.bigtable.data.v2.BigtableDataClient;
import com.google.cloud.bigtable.data.v2.models.RowMutation;
import com.google.cloud.bigtable.data.v2.models.TableId;
import com.google.protobuf.ByteString;
import io.tabula.cluster.conformance.ChangeFollower;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A change stream read through the official Java client while three node processes split,
 * merge and move the table's tablets and one node is killed with SIGKILL
 * (docs/change-streams.md). A follower on another node reads every partition, resumes from its
 * tokens every second (a disconnect each time), and follows every {@code CloseStream}.
 *
 * <p>A writer writes through the first node: the {@code z} ranges once, at first (they go cold
 * and merge), then the {@code k} range, whose tablet splits again and again. Meanwhile one of
 * its tablets moves, and then the third node is killed (its tablets recover elsewhere from its
 * commit log). Every write the writer had acknowledged is seen exactly once. A write whose call
 * failed may have been applied or not, and is seen at most once. Nothing is seen that was not
 * written, and each row's changes come in the order they were written.
 */
@Timeout(value = 7, unit = TimeUnit.MINUTES)
@ExtendWith(ClusterFixture.LogsOnFailure.class)
class ChangeStreamUnderFaultsTest {
  private static final TableId T = TableId.of("t");

  @Test
  void aFollowerSeesEveryAcknowledgedWriteOnceThroughSplitsMergesAMoveAndAKill() throws Exception {
    try (ClusterFixture cluster = new ClusterFixture()) {
      cluster.configure(SplitsAndMergesTest.SMALL_TABLETS);
      for (String n : List.of("n1", "n2", "n3")) {
        cluster.add(n);
      }
      try (BigtableTableAdminClient admin = ClusterFixture.admin(cluster.node("n1"))) {
        CreateTableRequest create = CreateTableRequest.of("t").addFamily("f")
            .addChangeStreamRetention(org.threeten.bp.Duration.ofDays(1));
        List.of("k", "z1", "z2", "z3", "z4").forEach(s -> create.addSplit(ByteString.copyFromUtf8(s)));
        admin.createTable(create);
      }
      Map<String, Long> acked = new ConcurrentHashMap<>();
      Set<String> unknown = ConcurrentHashMap.newKeySet();
      AtomicBoolean stop = new AtomicBoolean();
      AtomicReference<Throwable> writerFailure = new AtomicReference<>();
      Instant start = Instant.now().minusSeconds(1);
      try (BigtableDataClient reader = ClusterFixture.data(cluster.node("n2"));
          BigtableDataClient writer = ClusterFixture.data(cluster.node("n1"));
          ChangeFollower follower = new ChangeFollower(reader, "t", Duration.ofSeconds(1))) {
        follower.start(start);
        Thread writes = new Thread(() -> write(writer, acked, unknown, stop, writerFailure), "writer");
        writes.start();
        try {
          Thread.sleep(8_000);
          String moved = moveOne(cluster);
          Thread.sleep(8_000);
          long killedAt = System.nanoTime();
          cluster.node("n3").kill();
          System.out.printf("moved tablet %s; killed n3 %d s into the writes%n", moved, 16);
          Workload.awaitPlacement(cluster.node("n1"), Set.of("n1", "n2"), Duration.ofSeconds(60), t -> true);
          System.out.printf("n3's tablets placed elsewhere %d ms after the kill%n",
              TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - killedAt));
          Thread.sleep(8_000);
        } finally {
          stop.set(true);
          writes.join(60_000);
        }
        assertNull(writerFailure.get(), () -> "the writer failed: " + writerFailure.get());
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
        while (!seenAll(follower, acked.keySet()) && System.nanoTime() < deadline && follower.failure() == null) {
          Thread.sleep(500);
        }
        assertNull(follower.failure(), () -> "the follower failed: " + follower.failure());
        check(follower.seen(), acked, unknown);
        System.out.printf("%d acknowledged writes (and %d of unknown outcome) seen once each, in order per row;"
            + " %d CloseStreams followed (%d of merges), %d resumes from tokens, %d heartbeats%n", acked.size(),
            unknown.size(), follower.closes.get(), follower.merges.get(), follower.resumes.get(),
            follower.heartbeats.get());
        assertTrue(follower.closes.get() - follower.merges.get() >= 2, "tablets split under the follower");
        assertTrue(follower.merges.get() >= 1, "tablets merged under the follower");
      }
    }
  }

  /**
   * Writes until {@code stop}: four rows of each cold z range first, then k rows, each value
   * {@code row#n} with n growing per row. A write the node acknowledged goes to {@code acked},
   * one whose call failed (applied or not) to {@code unknown}.
   */
  private static void write(BigtableDataClient data, Map<String, Long> acked, Set<String> unknown, AtomicBoolean stop,
      AtomicReference<Throwable> failure) {
    String pad = "x".repeat(1024);
    Map<String, Long> next = new HashMap<>();
    try {
      for (long i = 0; !stop.get(); i++) {
        String row = i < 16 ? "z" + (1 + i % 4) + "-" + i / 4 : String.format("k%04d", (i * 7919) % 800);
        long n = next.merge(row, 1L, Long::sum);
        String value = row + "#" + n;
        try {
          data.mutateRow(RowMutation.create(T, row).setCell("f", "q", value).setCell("f", "pad", pad));
          acked.put(value, n);
        } catch (RuntimeException e) {
          unknown.add(value);
        }
      }
    } catch (RuntimeException e) {
      failure.set(e);
    }
  }

  private static boolean seenAll(ChangeFollower follower, Set<String> acked) {
    Set<String> seen = new HashSet<>();
    follower.seen().forEach(s -> seen.add(s.value()));
    return seen.containsAll(acked);
  }

  /** Each acknowledged write once, each of unknown outcome at most once, nothing else, each row's in order. */
  private static void check(List<ChangeFollower.Seen> seen, Map<String, Long> acked, Set<String> unknown) {
    Map<String, Integer> times = new HashMap<>();
    Map<String, Long> lastOfRow = new HashMap<>();
    List<String> problems = new ArrayList<>();
    for (ChangeFollower.Seen s : seen) {
      if (!acked.containsKey(s.value()) && !unknown.contains(s.value())) {
        problems.add("never written: " + s.value());
      }
      if (times.merge(s.value(), 1, Integer::sum) == 2) {
        problems.add("seen twice: " + s.value());
      }
      long n = Long.parseLong(s.value().substring(s.value().indexOf('#') + 1));
      Long before = lastOfRow.put(s.row(), n);
      if (before != null && before >= n) {
        problems.add("row " + s.row() + ": write " + n + " after write " + before);
      }
    }
    acked.keySet().stream().filter(v -> !times.containsKey(v)).sorted().limit(20)
        .forEach(v -> problems.add("acknowledged but never seen: " + v));
    assertEquals(List.of(), problems.subList(0, Math.min(40, problems.size())), problems.size() + " problems");
  }

  /**
   * Moves the first tablet of the k range to another node than its owner and n3 (killed later),
   * through the Management API; its id.
   */
  private static String moveOne(ClusterFixture cluster) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (true) {
      for (String[] r : ClusterFixture.ranges(cluster.node("n1"), "t")) {
        if (!r[1].replace("\\\"", "\"").replace("\"", "").startsWith("k")) {
          continue;
        }
        String owner = ClusterFixture.tablets(cluster.node("n1"), "t").get(r[0])[0];
        String to = owner.equals("n1") ? "n2" : "n1";
        var answer = cluster.node("n1").post("/tabula/tablets/" + r[0] + "/move?to=" + to);
        if (answer.statusCode() == 202) {
          return r[0];
        }
        if (System.nanoTime() > deadline) {
          assertEquals(202, answer.statusCode(), answer.body());
        }
      }
      if (System.nanoTime() > deadline) {
        throw new AssertionError("no tablet of the k range to move: " + ClusterFixture.body(cluster.node("n1"),
            "/tabula/tablets?table=t"));
      }
      Thread.sleep(200);
    }
  }
}
