package io.tabula.cluster.conformance;

import static com.google.cloud.bigtable.admin.v2.models.GCRules.GCRULES;
import static com.google.cloud.bigtable.data.v2.models.Filters.FILTERS;

import com.google.api.gax.rpc.ApiException;
import com.google.cloud.bigtable.admin.v2.models.ColumnFamily;
import com.google.cloud.bigtable.admin.v2.models.CreateTableRequest;
import com.google.cloud.bigtable.admin.v2.models.ModifyColumnFamiliesRequest;
import com.google.cloud.bigtable.admin.v2.models.Type;
import com.google.cloud.bigtable.data.v2.models.ConditionalRowMutation;
import com.google.cloud.bigtable.data.v2.models.Mutation;
import com.google.cloud.bigtable.data.v2.models.Query;
import com.google.cloud.bigtable.data.v2.models.Range.TimestampRange;
import com.google.cloud.bigtable.data.v2.models.ReadModifyWriteRow;
import com.google.cloud.bigtable.data.v2.models.Row;
import com.google.cloud.bigtable.data.v2.models.RowMutation;
import com.google.cloud.bigtable.data.v2.models.TableId;
import com.google.cloud.bigtable.data.v2.models.Value;
import com.google.protobuf.ByteString;
import com.google.zetasketch.HyperLogLogPlusPlus;
import java.nio.ByteBuffer;
import java.util.Comparator;
import java.util.function.Supplier;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Aggregate column families (docs/aggregates.md) with the official clients: Int64 sums
 * compared with Google's emulator, which implements them; min, max and HyperLogLog++ unique
 * counts, and the refusals of wrong writes, on Tabula alone (the emulator keeps the last
 * input of an HLL family instead of a sketch, accepts what Cloud Bigtable refuses, and exits
 * on a malformed MergeToCell).
 */
@Tag("conformance")
class AggregateConformanceTest {
  @RegisterExtension
  static final ConformanceHarness harness = new ConformanceHarness();

  private static void createCounters(ConformancePeer peer, String table) {
    peer.admin().createTable(CreateTableRequest.of(table)
        .addFamily("sum", Type.int64Sum())
        .addFamily("recent", GCRULES.maxVersions(1), Type.int64Sum())
        .addFamily("min", Type.int64Min())
        .addFamily("max", Type.int64Max())
        .addFamily("hll", Type.int64Hll())
        .addFamily("cf"));
  }

  private static ByteString int64(long v) {
    return ByteString.copyFrom(ByteBuffer.allocate(8).putLong(v).array());
  }

  private static String read(ConformancePeer peer, String table, Query q) {
    return Render.rows(peer.data().readRows(q));
  }

  private static String families(ConformancePeer peer, String table) {
    return peer.admin().getTable(table).getColumnFamilies().stream()
        .sorted(Comparator.comparing(ColumnFamily::getId))
        .map(f -> f.getId() + " " + f.getValueType() + " " + f.getGCRule())
        .collect(Collectors.joining("\n", "", "\n"));
  }

  @Test
  void sumsFoldEveryAddAndMergeOfACell() {
    harness.sameWithoutTable("aggregate-sum", (peer, table) -> {
      createCounters(peer, table);
      TableId t = TableId.of(table);
      peer.data().mutateRow(RowMutation.create(t, "r").addToCell("sum", "q", 1000, 5).addToCell("sum", "q", 1000, 7));
      peer.data().mutateRow(RowMutation.create(t, "r").addToCell("sum", "q", 1000, -20)
          .addToCell("sum", "q", 2000, 1).addToCell("sum", "other", 1000, 3));
      peer.data().mutateRow(RowMutation.create(t, "r").mergeToCell("sum", "q", 1000, int64(100)));
      peer.data().mutateRow(RowMutation.create(t, "r2").addToCell("sum", "q", 1000, Long.MAX_VALUE)
          .addToCell("sum", "q", 1000, 1));
      peer.data().mutateRow(RowMutation.create(t, "r3").addToCell("recent", "q", 1000, 1)
          .addToCell("recent", "q", 1000, 2));
      return families(peer, table) + read(peer, table, Query.create(t));
    });
  }

  @Test
  void deletesHideTheOperandsWrittenBeforeThem() {
    harness.sameWithoutTable("aggregate-deletes", (peer, table) -> {
      createCounters(peer, table);
      TableId t = TableId.of(table);
      peer.data().mutateRow(RowMutation.create(t, "r").addToCell("sum", "q", 1000, 5).addToCell("sum", "q", 2000, 6)
          .addToCell("sum", "q", 3000, 7));
      peer.data().mutateRow(RowMutation.create(t, "r").deleteCells("sum", ByteString.copyFromUtf8("q"),
          TimestampRange.create(1000, 3000)));
      peer.data().mutateRow(RowMutation.create(t, "r").addToCell("sum", "q", 2000, 40));
      peer.data().mutateRow(RowMutation.create(t, "r2").addToCell("sum", "q", 1000, 1));
      peer.data().mutateRow(RowMutation.create(t, "r2").deleteFamily("sum").addToCell("sum", "q", 1000, 2));
      return read(peer, table, Query.create(t));
    });
  }

  @Test
  void filtersSeeTheFoldedValue() {
    harness.sameWithoutTable("aggregate-filters", (peer, table) -> {
      createCounters(peer, table);
      TableId t = TableId.of(table);
      peer.data().mutateRow(RowMutation.create(t, "r").addToCell("sum", "q", 1000, 5).addToCell("sum", "q", 2000, 3)
          .addToCell("sum", "q", 2000, 4));
      peer.data().mutateRow(RowMutation.create(t, "s").addToCell("sum", "q", 1000, 6));
      return read(peer, table, Query.create(t).filter(FILTERS.limit().cellsPerColumn(1)))
          + read(peer, table, Query.create(t).filter(FILTERS.value().exactMatch(int64(7))))
          + read(peer, table, Query.create(t).filter(FILTERS.value().strip()));
    });
  }

  @Test
  void conditionalMutationsAdd() {
    harness.sameWithoutTable("aggregate-check-and-mutate", (peer, table) -> {
      createCounters(peer, table);
      TableId t = TableId.of(table);
      peer.data().mutateRow(RowMutation.create(t, "r").setCell("cf", "flag", 1000, "on"));
      boolean matched = peer.data().checkAndMutateRow(ConditionalRowMutation.create(t, "r")
          .condition(FILTERS.family().exactMatch("cf"))
          .then(Mutation.create().addToCell("sum", "q", 1000, 10))
          .otherwise(Mutation.create().addToCell("sum", "q", 1000, -10)));
      return matched + "\n" + read(peer, table, Query.create(t));
    });
  }

  @Test
  void minMaxAndAUniqueCountWithinTheSketchsError() {
    harness.tabulaAlone("aggregate-min-max-hll", "ok\n", (peer, ignored) -> {
      String table = ConformanceHarness.tableName("counters");
      createCounters(peer, table);
      TableId t = TableId.of(table);
      long[] values = {17, -4, 99, 3, -4};
      for (long v : values) {
        peer.data().mutateRow(RowMutation.create(t, "r").addToCell("min", "q", 1000, v).addToCell("max", "q", 1000, v));
      }
      peer.data().mutateRow(RowMutation.create(t, "r").mergeToCell("min", "q", 1000, int64(-50)));
      int distinct = 20_000;
      for (int from = 0; from < distinct; from += 10_000) {
        RowMutation m = RowMutation.create(t, "r");
        for (int i = from; i < from + 10_000; i++) {
          m.addToCell("hll", "visitors", 1000, i).addToCell("hll", "visitors", 1000, i); // each value twice
        }
        peer.data().mutateRow(m);
      }
      Row r = peer.data().readRow(t, "r");
      long min = ByteBuffer.wrap(r.getCells("min", "q").get(0).getValue().toByteArray()).getLong();
      long max = ByteBuffer.wrap(r.getCells("max", "q").get(0).getValue().toByteArray()).getLong();
      long count = HyperLogLogPlusPlus.forProto(r.getCells("hll", "visitors").get(0).getValue().toByteArray())
          .result();
      // precision 15: a standard error of 1.04 / sqrt(2^15), about 0.57%; allow four of them
      boolean countOk = Math.abs(count - distinct) < distinct * 4 * 0.0057;
      return min == -50 && max == 99 && countOk ? "ok\n" : "min " + min + " max " + max + " count " + count + "\n";
    });
  }

  /** What a refused call answers: its code and whether its message names {@code field}. */
  private static String refused(String field, Supplier<?> call) {
    try {
      call.get();
      return "accepted\n";
    } catch (ApiException e) {
      String message = String.valueOf(e.getMessage());
      return e.getStatusCode().getCode() + (message.contains(field) ? " naming " + field : " (" + message + ")")
          + "\n";
    }
  }

  @Test
  void wrongWritesAndTypesAreRefusedNamingTheField() {
    String expected = """
        INVALID_ARGUMENT naming mutations[0].set_cell.family_name
        INVALID_ARGUMENT naming mutations[1].add_to_cell.family_name
        INVALID_ARGUMENT naming mutations[0].merge_to_cell.input
        INVALID_ARGUMENT naming mutations[0].merge_to_cell.input
        INVALID_ARGUMENT naming mutations[0].add_to_cell.timestamp
        INVALID_ARGUMENT naming mutations[0].add_to_cell.timestamp
        INVALID_ARGUMENT naming mutations[0].add_to_cell.input
        INVALID_ARGUMENT naming rules[0].family_name
        INVALID_ARGUMENT naming modifications[0].create.value_type
        INVALID_ARGUMENT naming column_families[int].value_type
        row "r"
          sum:"q" @1000 = "\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x02"
        1 rows""";
    harness.tabulaAlone("aggregate-refusals", expected, (peer, ignored) -> {
      String table = ConformanceHarness.tableName("refusals");
      createCounters(peer, table);
      TableId t = TableId.of(table);
      StringBuilder out = new StringBuilder();
      out.append(refused("mutations[0].set_cell.family_name", () -> {
        peer.data().mutateRow(RowMutation.create(t, "r").setCell("sum", "q", 1000, "x"));
        return null;
      }));
      out.append(refused("mutations[1].add_to_cell.family_name", () -> {
        peer.data().mutateRow(RowMutation.create(t, "r").addToCell("sum", "q", 1000, 1).addToCell("cf", "q", 1000, 1));
        return null;
      }));
      out.append(refused("mutations[0].merge_to_cell.input", () -> {
        peer.data().mutateRow(RowMutation.create(t, "r").mergeToCell("sum", "q", 1000, ByteString.copyFrom(
            new byte[] {1})));
        return null;
      }));
      out.append(refused("mutations[0].merge_to_cell.input", () -> {
        peer.data().mutateRow(RowMutation.create(t, "r").mergeToCell("hll", "q", 1000, ByteString.copyFromUtf8(
            "not a sketch")));
        return null;
      }));
      out.append(refused("mutations[0].add_to_cell.timestamp", () -> {
        peer.data().mutateRow(RowMutation.create(t, "r").addToCell("sum", Value.rawValue(ByteString.copyFromUtf8("q")),
            Value.intValue(1000), Value.intValue(1)));
        return null;
      }));
      out.append(refused("mutations[0].add_to_cell.timestamp", () -> {
        peer.data().mutateRow(RowMutation.create(t, "r").addToCell("sum", "q", -1000, 1));
        return null;
      }));
      out.append(refused("mutations[0].add_to_cell.input", () -> {
        peer.data().mutateRow(RowMutation.create(t, "r").addToCell("sum", Value.rawValue(ByteString.copyFromUtf8("q")),
            Value.rawTimestamp(1000), Value.rawValue(int64(1))));
        return null;
      }));
      out.append(refused("rules[0].family_name", () ->
          peer.data().readModifyWriteRow(ReadModifyWriteRow.create(t, "r").increment("sum", "q", 1))));
      out.append(refused("modifications[0].create.value_type", () -> peer.admin().modifyFamilies(
          ModifyColumnFamiliesRequest.of(table).addFamily("int", Type.bigEndianInt64()))));
      out.append(refused("column_families[int].value_type", () -> peer.admin().createTable(
          CreateTableRequest.of(table + "-int").addFamily("int", Type.bigEndianInt64()))));
      // nothing refused was applied; a refused request's valid part neither
      peer.data().mutateRow(RowMutation.create(t, "r").addToCell("sum", "q", 1000, 2));
      out.append(read(peer, table, Query.create(t)));
      return out.toString();
    });
  }

  @Test
  void aFamilysTypeStaysWhenItsGcRuleChanges() {
    harness.sameWithoutTable("aggregate-update-gc", (peer, table) -> {
      createCounters(peer, table);
      peer.admin().modifyFamilies(ModifyColumnFamiliesRequest.of(table).updateFamily("sum", GCRULES.maxVersions(2))
          .addFamily("added", Type.int64Max()));
      return families(peer, table);
    });
  }

  @Test
  void aHotCounterAddedToFromManyCallsSumsEveryAdd() {
    harness.sameWithoutTable("aggregate-many-adds", (peer, table) -> {
      createCounters(peer, table);
      TableId t = TableId.of(table);
      for (int i = 1; i <= 300; i++) {
        peer.data().mutateRow(RowMutation.create(t, "hot").addToCell("sum", "q", 1000, i));
      }
      return read(peer, table, Query.create(t));
    });
  }
}
