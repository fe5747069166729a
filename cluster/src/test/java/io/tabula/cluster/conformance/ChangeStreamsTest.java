package io.tabula.cluster.conformance;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.api.gax.rpc.FailedPreconditionException;
import com.google.api.gax.rpc.InvalidArgumentException;
import com.google.cloud.bigtable.admin.v2.BigtableTableAdminClient;
import com.google.cloud.bigtable.admin.v2.models.CreateTableRequest;
import com.google.cloud.bigtable.data.v2.BigtableDataClient;
import com.google.cloud.bigtable.data.v2.models.ChangeStreamContinuationToken;
import com.google.cloud.bigtable.data.v2.models.ChangeStreamRecord;
import com.google.cloud.bigtable.data.v2.models.CloseStream;
import com.google.cloud.bigtable.data.v2.models.Range.ByteStringRange;
import com.google.cloud.bigtable.data.v2.models.ReadChangeStreamQuery;
import com.google.cloud.bigtable.data.v2.models.RowMutation;
import com.google.cloud.bigtable.data.v2.models.TableId;
import com.typesafe.config.ConfigFactory;
import io.tabula.cluster.TabulaNode;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Change streams through the official Java client against one node (docs/change-streams.md):
 * a reader that follows every partition, resuming from its tokens every second and following
 * each CloseStream, sees every acknowledged write exactly once, in commit order per row, and
 * nothing else, while the table's tablets split (small split threshold) and merge (cold
 * ranges, quick merges). Bad requests are answered with a status naming the field.
 */
@Timeout(value = 4, unit = TimeUnit.MINUTES)
class ChangeStreamsTest {
  @TempDir
  Path dir;

  private TabulaNode churningNode() {
    return TabulaNode.start(ConfigFactory.parseMap(Map.of(
        "tabula.node.data-dir", dir.toString(), "tabula.node.grpc-port", 0, "tabula.node.http-port", 0,
        "tabula.node.memtable-bytes", 16 * 1024,
        "tabula.tablet.split-bytes", 96 * 1024,
        "tabula.tablet.check-interval", "100ms",
        "tabula.master.merge.below-bytes", 48 * 1024,
        "tabula.master.merge.cold-for", "3s",
        "tabula.master.merge.cold-ops-per-second", 100_000)));
  }

  private static CreateTableRequest withStream(String table) {
    return CreateTableRequest.of(table).addFamily("f").addChangeStreamRetention(org.threeten.bp.Duration.ofDays(1));
  }

  @Test
  void aFollowerSeesEveryWriteOnceInOrderWhileTabletsSplitAndMerge() throws Exception {
    try (TabulaNode node = churningNode();
        BigtableTableAdminClient admin = BigtableTableAdminClient.create(ConformancePeer.adminSettings(node.grpcPort()));
        BigtableDataClient data = BigtableDataClient.create(ConformancePeer.dataSettings(node.grpcPort()))) {
      admin.createTable(withStream("events").addSplit(com.google.protobuf.ByteString.copyFromUtf8("z1"))
          .addSplit(com.google.protobuf.ByteString.copyFromUtf8("z2"))
          .addSplit(com.google.protobuf.ByteString.copyFromUtf8("z3")));
      Instant start = Instant.now();
      Map<String, List<String>> written = new LinkedHashMap<>();
      String pad = "x".repeat(300);
      int n = 0;
      try (ChangeFollower follower = new ChangeFollower(data, "events", Duration.ofSeconds(1))) {
        follower.start(start);
        // The z ranges once, then only k rows: z tablets go cold and merge, k's split.
        for (int z = 0; z < 4; z++) {
          write(data, written, "z" + z + "-row", "z" + z + "-" + n++, pad);
        }
        while (n < 1500) {
          String row = String.format("k%04d", (n * 7919) % 600);
          write(data, written, row, "v" + n++, pad);
          assertNull(follower.failure(), () -> "the follower failed: " + follower.failure());
        }
        List<String> all = new ArrayList<>();
        written.values().forEach(all::addAll);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while ((follower.seen().size() < all.size() || follower.merges.get() == 0) && System.nanoTime() < deadline
            && follower.failure() == null) {
          Thread.sleep(200);
        }
        assertNull(follower.failure(), () -> "the follower failed: " + follower.failure());
        Map<String, List<String>> seen = new LinkedHashMap<>();
        Map<String, Instant> lastCommit = new HashMap<>();
        for (ChangeFollower.Seen s : follower.seen()) {
          seen.computeIfAbsent(s.row(), r -> new ArrayList<>()).add(s.value());
          Instant before = lastCommit.put(s.row(), s.commit());
          assertTrue(before == null || !s.commit().isBefore(before), "commit times of row " + s.row()
              + " go back: " + before + " then " + s.commit());
        }
        for (Map.Entry<String, List<String>> e : written.entrySet()) {
          assertEquals(e.getValue(), seen.getOrDefault(e.getKey(), List.of()), "row " + e.getKey()
              + ": every write once, in order");
        }
        assertEquals(written.keySet(), seen.keySet(), "no row that was not written");
        System.out.printf("%d writes seen once each; %d CloseStreams followed (%d of merges), %d resumes from tokens,"
            + " %d heartbeats%n", all.size(), follower.closes.get(), follower.merges.get(), follower.resumes.get(),
            follower.heartbeats.get());
        assertTrue(follower.closes.get() - follower.merges.get() >= 2, "tablets split under the follower: "
            + follower.closes.get() + " CloseStreams");
        assertTrue(follower.merges.get() >= 1, "tablets merged under the follower");
      }
    }
  }

  private static void write(BigtableDataClient data, Map<String, List<String>> written, String row, String value,
      String pad) {
    data.mutateRow(RowMutation.create(TableId.of("events"), row).setCell("f", "q", value)
        .setCell("f", "pad", pad));
    written.computeIfAbsent(row, r -> new ArrayList<>()).add(value);
  }

  @Test
  void badRequestsAreAnsweredNamingTheField() throws Exception {
    try (TabulaNode node = TabulaNode.start(ConfigFactory.parseMap(Map.of("tabula.node.data-dir", dir.toString(),
            "tabula.node.grpc-port", 0, "tabula.node.http-port", 0)));
        BigtableTableAdminClient admin = BigtableTableAdminClient.create(ConformancePeer.adminSettings(node.grpcPort()));
        BigtableDataClient data = BigtableDataClient.create(ConformancePeer.dataSettings(node.grpcPort()))) {
      admin.createTable(withStream("s").addSplit(com.google.protobuf.ByteString.copyFromUtf8("m")));
      admin.createTable(CreateTableRequest.of("plain").addFamily("f"));
      ByteStringRange whole = ByteStringRange.unbounded();
      ByteStringRange left = ByteStringRange.create("", "m");

      FailedPreconditionException off = assertThrows(FailedPreconditionException.class,
          () -> data.generateInitialChangeStreamPartitions("plain").forEach(p -> { }));
      assertTrue(off.getMessage().contains("change"), off.getMessage());

      InvalidArgumentException garbage = assertThrows(InvalidArgumentException.class, () -> first(data,
          ReadChangeStreamQuery.create("s").streamPartition(left).continuationTokens(List.of(
              ChangeStreamContinuationToken.create(left, "not-a-token!"))).heartbeatDuration(Duration.ofSeconds(1))));
      assertTrue(garbage.getMessage().contains("continuation_tokens.tokens[0].token"), garbage.getMessage());

      InvalidArgumentException gap = assertThrows(InvalidArgumentException.class, () -> first(data,
          ReadChangeStreamQuery.create("s").streamPartition(whole).continuationTokens(List.of(
              ChangeStreamContinuationToken.create(left, "AQIAAAAAAAAAAA")))));
      assertTrue(gap.getMessage().contains("cover"), gap.getMessage());

      Instant now = Instant.now();
      InvalidArgumentException backwards = assertThrows(InvalidArgumentException.class, () -> first(data,
          ReadChangeStreamQuery.create("s").streamPartition(left).startTime(now).endTime(now.minusSeconds(5))));
      assertTrue(backwards.getMessage().contains("end_time"), backwards.getMessage());

      InvalidArgumentException old = assertThrows(InvalidArgumentException.class, () -> first(data,
          ReadChangeStreamQuery.create("s").streamPartition(left).startTime(now.minus(Duration.ofDays(2)))));
      assertTrue(old.getMessage().contains("start_time"), old.getMessage());

      InvalidArgumentException beat = assertThrows(InvalidArgumentException.class, () -> first(data,
          ReadChangeStreamQuery.create("s").streamPartition(left).startTime(now)
              .heartbeatDuration(Duration.ofMillis(1))));
      assertTrue(beat.getMessage().contains("heartbeat_duration"), beat.getMessage());

      // A partition that is no tablet's range: the stream names the tablets that hold it.
      ChangeStreamRecord r = first(data, ReadChangeStreamQuery.create("s").streamPartition(whole).startTime(now));
      CloseStream close = (CloseStream) r;
      assertEquals(2, close.getNewPartitions().size());
      assertEquals(com.google.cloud.bigtable.common.Status.Code.OUT_OF_RANGE, close.getStatus().getCode());

      // A start before the table had a change stream, within the retention: served from what is kept.
      data.mutateRow(RowMutation.create(TableId.of("s"), "a").setCell("f", "q", "1"));
      ChangeStreamRecord firstChange = first(data, ReadChangeStreamQuery.create("s").streamPartition(left)
          .startTime(now.minusSeconds(60)));
      assertTrue(firstChange instanceof com.google.cloud.bigtable.data.v2.models.ChangeStreamMutation,
          "the write made after the start: " + firstChange);
      String token = ((com.google.cloud.bigtable.data.v2.models.ChangeStreamMutation) firstChange).getToken();
      assertFalse(token.isEmpty());

      // That token is a position of the left tablet: the right partition refuses it.
      ByteStringRange right = ByteStringRange.create("m", "");
      InvalidArgumentException elsewhere = assertThrows(InvalidArgumentException.class, () -> first(data,
          ReadChangeStreamQuery.create("s").streamPartition(right).continuationTokens(List.of(
              ChangeStreamContinuationToken.create(right, token)))));
      assertTrue(elsewhere.getMessage().contains("another partition"), elsewhere.getMessage());

      InvalidArgumentException tooLong = assertThrows(InvalidArgumentException.class, () -> admin.createTable(
          CreateTableRequest.of("long").addFamily("f").addChangeStreamRetention(org.threeten.bp.Duration.ofDays(10))));
      assertTrue(tooLong.getMessage().contains("retention_period"), tooLong.getMessage());
    }
  }

  /**
   * A reader from a start time that has seen no change yet resumes from its heartbeat's token
   * at that start time, not from the beginning of what the tablet keeps.
   */
  @Test
  void aHeartbeatBeforeAnyChangeResumesFromTheStartTime() throws Exception {
    try (TabulaNode node = TabulaNode.start(ConfigFactory.parseMap(Map.of("tabula.node.data-dir", dir.toString(),
            "tabula.node.grpc-port", 0, "tabula.node.http-port", 0, "tabula.node.memtable-bytes", 16 * 1024)));
        BigtableTableAdminClient admin = BigtableTableAdminClient.create(ConformancePeer.adminSettings(node.grpcPort()));
        BigtableDataClient data = BigtableDataClient.create(ConformancePeer.dataSettings(node.grpcPort()))) {
      admin.createTable(withStream("h"));
      // Changes before the start, all flushed (written until a write fills the memtable, which is then
      // flushed whole): a reader from the start passes over their segments unread, and finds none in memory.
      for (int i = 0; segments() == 0; i++) {
        assertTrue(i < 100, "the memtable filled");
        data.mutateRow(RowMutation.create(TableId.of("h"), "r").setCell("f", "q", "before").setCell("f", "pad",
            "x".repeat(1024)));
        for (int wait = 0; wait < 20 && segments() == 0 && i > 10; wait++) {
          Thread.sleep(50);
        }
      }
      Thread.sleep(20);
      Instant start = Instant.now();
      ByteStringRange all = ByteStringRange.unbounded();
      ChangeStreamRecord beat = first(data, ReadChangeStreamQuery.create("h").streamPartition(all).startTime(start)
          .heartbeatDuration(Duration.ofMillis(200)));
      ChangeStreamContinuationToken token = ((com.google.cloud.bigtable.data.v2.models.Heartbeat) beat)
          .getChangeStreamContinuationToken();
      // Before any change from the start has passed, the reader's token is the start time itself: a position
      // would resume before the start once the changes ahead of it were passed over unread (docs/change-streams.md).
      assertFalse(io.tabula.cluster.grpc.ChangeToken.decode(token.getToken()).isPosition(), token.getToken());
      data.mutateRow(RowMutation.create(TableId.of("h"), "r").setCell("f", "q", "after"));
      ChangeStreamRecord next = first(data, ReadChangeStreamQuery.create("h").streamPartition(all)
          .continuationTokens(List.of(token)).heartbeatDuration(Duration.ofMillis(200)));
      var change = (com.google.cloud.bigtable.data.v2.models.ChangeStreamMutation) next;
      assertEquals("after", ((com.google.cloud.bigtable.data.v2.models.SetCell) change.getEntries().get(0)).getValue()
          .toStringUtf8(), "the write before the start is not sent");
    }
  }

  /** How many change-log segments table h's tablets have written. */
  private long segments() throws java.io.IOException {
    Path tables = dir.resolve("tables/h");
    if (!java.nio.file.Files.exists(tables)) {
      return 0;
    }
    try (java.util.stream.Stream<Path> files = java.nio.file.Files.walk(tables)) {
      return files.filter(p -> p.toString().endsWith(".chg")).count();
    }
  }

  /** The first record of a stream (the stream is then cancelled). */
  private static ChangeStreamRecord first(BigtableDataClient data, ReadChangeStreamQuery q) {
    var stream = data.readChangeStream(q);
    try {
      return stream.iterator().next();
    } finally {
      stream.cancel();
    }
  }
}
