package io.tabula.cluster.conformance;

import static com.google.cloud.bigtable.data.v2.models.Filters.FILTERS;
import static io.tabula.cluster.conformance.ConformanceHarness.FAMILY;
import static io.tabula.cluster.conformance.ConformanceHarness.FAMILY2;

import com.google.cloud.bigtable.data.v2.models.BulkMutation;
import com.google.cloud.bigtable.data.v2.models.ConditionalRowMutation;
import com.google.cloud.bigtable.data.v2.models.MutateRowsException;
import com.google.cloud.bigtable.data.v2.models.Mutation;
import com.google.cloud.bigtable.data.v2.models.Query;
import com.google.cloud.bigtable.data.v2.models.Range.TimestampRange;
import com.google.cloud.bigtable.data.v2.models.ReadModifyWriteRow;
import com.google.cloud.bigtable.data.v2.models.RowMutation;
import com.google.cloud.bigtable.data.v2.models.TableId;
import com.google.protobuf.ByteString;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Conformance of the write path: every mutation type, MutateRows with per-entry results,
 * CheckAndMutateRow and ReadModifyWriteRow. See {@link ConformanceHarness} for targets.
 */
@Tag("conformance")
class MutationConformanceTest {
  @RegisterExtension
  static final ConformanceHarness harness = new ConformanceHarness();

  /** Writes cf:a at 1000, 2000, 3000, cf:b at 1000 and cf2:x at 4000 into row "r". */
  static void seed(ConformancePeer peer, String table) {
    peer.data().mutateRow(RowMutation.create(TableId.of(table), "r")
        .setCell(FAMILY, "a", 1000, "a1")
        .setCell(FAMILY, "a", 2000, "a2")
        .setCell(FAMILY, "a", 3000, "a3")
        .setCell(FAMILY, "b", 1000, "b1")
        .setCell(FAMILY2, "x", 4000, "x1"));
  }

  static String read(ConformancePeer peer, String table) {
    return Render.rows(peer.data().readRows(Query.create(TableId.of(table))));
  }

  @Test
  void setCellWithExplicitTimestamps() {
    harness.same("set-cell-explicit", (peer, table) -> {
      seed(peer, table);
      // Overwriting the same timestamp replaces the value.
      peer.data().mutateRow(RowMutation.create(TableId.of(table), "r").setCell(FAMILY, "a", 2000, "a2'"));
      return read(peer, table);
    });
  }

  @Test
  void setCellWithServerTimestamp() {
    // Server time is compared by presence, granularity and order only (see Render).
    harness.same("set-cell-server-time", (peer, table) -> {
      peer.data().mutateRow(RowMutation.create(TableId.of(table), "r", Mutation.createUnsafe()
          .setCell(FAMILY, "a", -1, "server")
          .setCell(FAMILY, "a", 1000, "explicit")));
      return read(peer, table);
    });
  }

  @Test
  void deleteCellsOfAColumn() {
    harness.same("delete-column", (peer, table) -> {
      seed(peer, table);
      peer.data().mutateRow(RowMutation.create(TableId.of(table), "r").deleteCells(FAMILY, "a"));
      return read(peer, table);
    });
  }

  @Test
  void deleteCellsInATimeRange() {
    harness.same("delete-column-time-range", (peer, table) -> {
      seed(peer, table);
      peer.data().mutateRow(RowMutation.create(TableId.of(table), "r")
          .deleteCells(FAMILY, ByteString.copyFromUtf8("a"), TimestampRange.create(2000, 3000)));
      String closedOpen = read(peer, table);
      peer.data().mutateRow(RowMutation.create(TableId.of(table), "r")
          .deleteCells(FAMILY, ByteString.copyFromUtf8("a"), TimestampRange.unbounded().startClosed(3000L)));
      return closedOpen + "\nthen from 3000 on:\n" + read(peer, table);
    });
  }

  @Test
  void deleteFamily() {
    harness.same("delete-family", (peer, table) -> {
      seed(peer, table);
      peer.data().mutateRow(RowMutation.create(TableId.of(table), "r").deleteFamily(FAMILY));
      return read(peer, table);
    });
  }

  @Test
  void deleteRow() {
    harness.same("delete-row", (peer, table) -> {
      seed(peer, table);
      peer.data().mutateRow(RowMutation.create(TableId.of(table), "other").setCell(FAMILY, "a", 1000, "o"));
      peer.data().mutateRow(RowMutation.create(TableId.of(table), "r").deleteRow());
      return read(peer, table);
    });
  }

  @Test
  void mutationsInOneRequestApplyInOrder() {
    harness.same("mutations-in-order", (peer, table) -> {
      peer.data().mutateRow(RowMutation.create(TableId.of(table), "r")
          .setCell(FAMILY, "a", 1000, "first")
          .deleteRow()
          .setCell(FAMILY, "a", 2000, "after delete row")
          .setCell(FAMILY2, "x", 1000, "x")
          .deleteFamily(FAMILY2));
      return read(peer, table);
    });
  }

  @Test
  void bulkMutateRowsReportsEachEntry() {
    // Difference: the emulator fails the unknown-family entry with INTERNAL; Tabula answers
    // NOT_FOUND, as it does for the same mutation sent alone and as Cloud Bigtable does.
    String rows = """
        row "r1"
          cf:"a" @1000 = "one"
        row "r3"
          cf2:"a" @1000 = "three"
        2 rows""";
    harness.differs("bulk-mutate-entries",
        "bulk failed\nentry 1: error INTERNAL\n" + rows,
        "bulk failed\nentry 1: error NOT_FOUND\n" + rows,
        (peer, table) -> {
      BulkMutation bulk = BulkMutation.create(TableId.of(table))
          .add("r1", Mutation.create().setCell(FAMILY, "a", 1000, "one"))
          .add("r2", Mutation.create().setCell("nosuchfamily", "a", 1000, "bad"))
          .add("r3", Mutation.create().setCell(FAMILY2, "a", 1000, "three"));
      String result;
      try {
        peer.data().bulkMutateRows(bulk);
        result = "bulk ok";
      } catch (MutateRowsException e) {
        result = Render.bulkFailure(e);
      }
      return result + "\n" + read(peer, table);
    });
  }

  @Test
  void checkAndMutateTakesTheTrueBranch() {
    harness.same("check-and-mutate-true", (peer, table) -> {
      seed(peer, table);
      Boolean matched = peer.data().checkAndMutateRow(ConditionalRowMutation.create(TableId.of(table), "r")
          .condition(FILTERS.value().exactMatch("a3"))
          .then(Mutation.create().setCell(FAMILY, "then", 1000, "yes"))
          .otherwise(Mutation.create().setCell(FAMILY, "else", 1000, "no")));
      return "matched=" + matched + "\n" + read(peer, table);
    });
  }

  @Test
  void checkAndMutateTakesTheFalseBranch() {
    harness.same("check-and-mutate-false", (peer, table) -> {
      seed(peer, table);
      Boolean matched = peer.data().checkAndMutateRow(ConditionalRowMutation.create(TableId.of(table), "r")
          .condition(FILTERS.value().exactMatch("absent"))
          .then(Mutation.create().setCell(FAMILY, "then", 1000, "yes"))
          .otherwise(Mutation.create().deleteCells(FAMILY, "a")));
      return "matched=" + matched + "\n" + read(peer, table);
    });
  }

  @Test
  void checkAndMutateWithoutPredicateOnMissingRow() {
    // No predicate: true when the row has any cell; a missing row takes the false branch.
    harness.same("check-and-mutate-missing-row", (peer, table) -> {
      Boolean matched = peer.data().checkAndMutateRow(ConditionalRowMutation.create(TableId.of(table), "new")
          .then(Mutation.create().setCell(FAMILY, "then", 1000, "yes"))
          .otherwise(Mutation.create().setCell(FAMILY, "else", 1000, "no")));
      return "matched=" + matched + "\n" + read(peer, table);
    });
  }

  @Test
  void readModifyWriteAppends() {
    harness.same("rmw-append", (peer, table) -> {
      seed(peer, table);
      String returned = Render.row(peer.data().readModifyWriteRow(ReadModifyWriteRow.create(TableId.of(table), "r")
          .append(FAMILY, "a", "+x")
          .append(FAMILY, "fresh", "new")));
      return "returned\n" + returned + "stored\n" + read(peer, table);
    });
  }

  @Test
  void readModifyWriteIncrements() {
    harness.same("rmw-increment", (peer, table) -> {
      peer.data().mutateRow(RowMutation.create(TableId.of(table), "r").setCell(FAMILY, "n", 1000, 41L));
      String returned = Render.row(peer.data().readModifyWriteRow(ReadModifyWriteRow.create(TableId.of(table), "r")
          .increment(FAMILY, "n", 1)
          .increment(FAMILY, "missing", -5)));
      return "returned\n" + returned + "stored\n" + read(peer, table);
    });
  }

  @Test
  void readModifyWriteIncrementOnNonEightByteValueFails() {
    // Difference: the emulator answers UNKNOWN (a bare Go error); Tabula answers
    // FAILED_PRECONDITION, the code Cloud Bigtable gives for "can only increment 64-bit values".
    String unchanged = """
        row "r"
          cf:"n" @1000 = "abc"
        1 rows""";
    harness.differs("rmw-increment-bad-width",
        "error UNKNOWN\n" + unchanged,
        "error FAILED_PRECONDITION\n" + unchanged,
        (peer, table) -> {
      peer.data().mutateRow(RowMutation.create(TableId.of(table), "r").setCell(FAMILY, "n", 1000, "abc"));
      String result = Render.outcome(() -> Render.row(peer.data().readModifyWriteRow(
          ReadModifyWriteRow.create(TableId.of(table), "r").increment(FAMILY, "n", 1))));
      return result + "\n" + read(peer, table);
    });
  }
}
