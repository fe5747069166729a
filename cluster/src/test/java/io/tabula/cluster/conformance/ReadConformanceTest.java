package io.tabula.cluster.conformance;

import static io.tabula.cluster.conformance.ConformanceHarness.FAMILY;

import com.google.cloud.bigtable.data.v2.models.BulkMutation;
import com.google.cloud.bigtable.data.v2.models.Mutation;
import com.google.cloud.bigtable.data.v2.models.Query;
import com.google.cloud.bigtable.data.v2.models.Range.ByteStringRange;
import com.google.cloud.bigtable.data.v2.models.TableId;
import com.google.protobuf.ByteString;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Conformance of row selection: ranges, key sets, prefixes, limits, reversed scans, samples. */
@Tag("conformance")
class ReadConformanceTest {
  @RegisterExtension
  static final ConformanceHarness harness = new ConformanceHarness();

  /** Rows a, a1, a2, b, b1, c, and the binary keys 0x00 and 0xff, each with one cell. */
  static void seed(ConformancePeer peer, String table) {
    BulkMutation bulk = BulkMutation.create(TableId.of(table));
    for (String key : new String[] {"a", "a1", "a2", "b", "b1", "c"}) {
      bulk.add(key, Mutation.create().setCell(FAMILY, "q", 1000, "v-" + key));
    }
    bulk.add(ByteString.copyFrom(new byte[] {0}), Mutation.create().setCell(FAMILY, "q", 1000, "low"));
    bulk.add(ByteString.copyFrom(new byte[] {(byte) 0xff}), Mutation.create().setCell(FAMILY, "q", 1000, "high"));
    peer.data().bulkMutateRows(bulk);
  }

  /** Runs {@code shape} applied to a query over the scenario's table. */
  private static void query(String scenario, UnaryOperator<Query> shape) {
    harness.same(scenario, (peer, table) -> {
      seed(peer, table);
      return Render.rows(peer.data().readRows(shape.apply(Query.create(TableId.of(table)))));
    });
  }

  @Test
  void fullScan() {
    query("read-full-scan", q -> q);
  }

  @Test
  void closedOpenRange() {
    query("read-range-closed-open", q -> q.range("a1", "b1"));
  }

  @Test
  void openClosedRange() {
    query("read-range-open-closed", q -> q.range(ByteStringRange.unbounded().startOpen("a").endClosed("b")));
  }

  @Test
  void unboundedEnds() {
    query("read-range-unbounded", q -> q
        .range(ByteStringRange.unbounded().endOpen("a1"))
        .range(ByteStringRange.unbounded().startClosed("c")));
  }

  @Test
  void keySetWithMissingAndRepeatedKeys() {
    query("read-key-set", q -> q.rowKey("b").rowKey("a").rowKey("nope").rowKey("a"));
  }

  /** More keys than a node reads gathered in one list (256): the node streams them by tablet. */
  @Test
  void manyKeysStreamed() {
    query("read-many-keys", q -> {
      for (int i = 0; i < 300; i++) {
        q.rowKey(i % 3 == 0 ? "a" + i : "b" + i);
      }
      return q.rowKey("a").rowKey("a1").rowKey("c").rowKey("b1");
    });
  }

  @Test
  void keysAndRangesTogether() {
    query("read-keys-and-ranges", q -> q.rowKey("c").range("a", "a2").range("a1", "b"));
  }

  @Test
  void prefix() {
    query("read-prefix", q -> q.prefix("a"));
  }

  @Test
  void rowsLimit() {
    query("read-rows-limit", q -> q.limit(3));
  }

  @Test
  void rowsLimitWithRange() {
    query("read-rows-limit-range", q -> q.range("a2", "z").limit(2));
  }

  @Test
  void reversedScan() {
    query("read-reversed", q -> q.reversed(true));
  }

  @Test
  void reversedScanWithRangeAndLimit() {
    query("read-reversed-range-limit", q -> q.range("a", "b1").limit(3).reversed(true));
  }

  @Test
  void readRowOfMissingKey() {
    harness.same("read-row-missing", (peer, table) -> {
      seed(peer, table);
      return Render.row(peer.data().readRow(TableId.of(table), "zzz")) + Render.row(peer.data().readRow(TableId.of(table), "b"));
    });
  }

  @Test
  void sampleRowKeys() {
    harness.same("sample-row-keys", (peer, table) -> {
      seed(peer, table);
      return Render.sample(peer.data().sampleRowKeys(TableId.of(table)));
    });
  }
}
