package io.tabula.cluster.conformance;

import static com.google.cloud.bigtable.data.v2.models.Filters.FILTERS;
import static io.tabula.cluster.conformance.ConformanceHarness.FAMILY;

import com.google.cloud.bigtable.admin.v2.models.CreateTableRequest;
import com.google.cloud.bigtable.data.v2.models.ConditionalRowMutation;
import com.google.cloud.bigtable.data.v2.models.Mutation;
import com.google.cloud.bigtable.data.v2.models.Query;
import com.google.cloud.bigtable.data.v2.models.ReadModifyWriteRow;
import com.google.cloud.bigtable.data.v2.models.RowMutation;
import com.google.cloud.bigtable.data.v2.models.TableId;
import com.google.protobuf.ByteString;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Conformance of error codes: only the gRPC status code is compared, never the message. */
@Tag("conformance")
class ErrorConformanceTest {
  /** One byte over Tabula's 64 KiB row-key limit. */
  static final int OVERSIZED_KEY = 64 * 1024 + 1;

  @RegisterExtension
  static final ConformanceHarness harness = new ConformanceHarness();

  @Test
  void missingTableIsNotFound() {
    harness.sameWithoutTable("error-missing-table", (peer, table) -> {
      String missing = "no-such-" + table;
      return "read " + Render.outcome(() -> Render.rows(peer.data().readRows(Query.create(TableId.of(missing)))))
          + "\nmutate " + Render.outcome(() -> {
            peer.data().mutateRow(RowMutation.create(TableId.of(missing), "r").setCell(FAMILY, "q", 1000, "v"));
            return "ok";
          })
          + "\ncheck-and-mutate " + Render.outcome(() -> "" + peer.data().checkAndMutateRow(
              ConditionalRowMutation.create(TableId.of(missing), "r").then(Mutation.create().deleteRow())))
          + "\nread-modify-write " + Render.outcome(() -> Render.row(peer.data().readModifyWriteRow(
              ReadModifyWriteRow.create(TableId.of(missing), "r").append(FAMILY, "q", "x"))))
          + "\nget-table " + Render.outcome(() -> peer.admin().getTable(missing).getId());
    });
  }

  @Test
  void unknownFamily() {
    // Difference: the emulator answers UNKNOWN (a bare Go error) for a mutation naming a family
    // the table does not have, in MutateRow, ReadModifyWriteRow and CheckAndMutateRow alike
    // (INTERNAL per entry in MutateRows). Tabula answers NOT_FOUND, as Cloud Bigtable does.
    harness.differs("error-unknown-family", """
        mutate error UNKNOWN
        read-modify-write error UNKNOWN
        check-and-mutate error UNKNOWN""", """
        mutate error NOT_FOUND
        read-modify-write error NOT_FOUND
        check-and-mutate error NOT_FOUND""", (peer, table) ->
        "mutate " + Render.outcome(() -> {
          peer.data().mutateRow(RowMutation.create(TableId.of(table), "r").setCell("nosuchfamily", "q", 1000, "v"));
          return "ok";
        })
        + "\nread-modify-write " + Render.outcome(() -> Render.row(peer.data().readModifyWriteRow(
            ReadModifyWriteRow.create(TableId.of(table), "r").append("nosuchfamily", "q", "x"))))
        + "\ncheck-and-mutate " + Render.outcome(() -> "" + peer.data().checkAndMutateRow(
            ConditionalRowMutation.create(TableId.of(table), "r")
                .then(Mutation.create().setCell(FAMILY, "q", 1000, "v"))
                .otherwise(Mutation.create().setCell("nosuchfamily", "q", 1000, "v")))));
  }

  @Test
  void rowKeyOver64KiB() {
    // Difference: the emulator stores a row key of any length. Tabula rejects a key over
    // 64 KiB with INVALID_ARGUMENT and writes nothing (Cloud Bigtable's own limit is lower).
    harness.differs("error-row-key-too-long", """
        mutate ok
        row <65537 bytes starting "\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00...">
          cf:"q" @1000 = "v"
        1 rows""", """
        mutate error INVALID_ARGUMENT
        0 rows""", (peer, table) -> {
      ByteString key = ByteString.copyFrom(new byte[OVERSIZED_KEY]);
      return "mutate " + Render.outcome(() -> {
        peer.data().mutateRow(RowMutation.create(TableId.of(table), key).setCell(FAMILY, "q", 1000, "v"));
        return "ok";
      }) + "\n" + Render.rows(peer.data().readRows(Query.create(TableId.of(table))));
    });
  }

  @Test
  void badRegexInPredicate() {
    // Difference: in ReadRows the emulator rejects a bad regex with INVALID_ARGUMENT (see
    // FilterConformanceTest#badRegexIsRejected), but as a CheckAndMutateRow predicate it
    // quietly treats it as "no match" and answers false. Tabula rejects it the same way in both.
    harness.differs("error-bad-regex-predicate", "false", "error INVALID_ARGUMENT",
        (peer, table) -> Render.outcome(() -> "" + peer.data().checkAndMutateRow(
        ConditionalRowMutation.create(TableId.of(table), "r")
            .condition(FILTERS.value().regex("[unclosed"))
            .then(Mutation.create().setCell(FAMILY, "q", 1000, "v")))));
  }

  @Test
  void createExistingTableIsAlreadyExists() {
    harness.same("error-table-exists", (peer, table) ->
        Render.outcome(() -> peer.admin().createTable(CreateTableRequest.of(table).addFamily(FAMILY)).getId()));
  }

  @Test
  void timestampFinerThanMillisecondsIsTruncatedForAClientThatWritesMicroseconds() {
    // Difference: the emulator rejects a timestamp that is not a multiple of 1000 micros with
    // UNKNOWN ("invalid timestamp"). The official client announces in its bigtable-features header
    // that it writes microsecond timestamps (built for Cloud Bigtable, it stamps cells with the
    // current microsecond), and Cloud Bigtable takes them for a table of millisecond granularity:
    // Tabula truncates them to the millisecond. A client that does not announce it is refused
    // with INVALID_ARGUMENT (MalformedRequestTest).
    harness.differs("error-timestamp-granularity", "error UNKNOWN\n0 rows",
        "ok\nrow \"r\"\n  cf:\"q\" @1000 = \"v\"\n1 rows",
        (peer, table) -> Render.outcome(() -> {
          peer.data().mutateRow(RowMutation.create(TableId.of(table), "r").setCell(FAMILY, "q", 1500, "v"));
          return "ok";
        }) + "\n" + Render.rows(peer.data().readRows(Query.create(TableId.of(table)))));
  }
}
