package io.tabula.cluster.client;

import static io.tabula.cluster.client.QueryModel.bytes;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.ByteString;
import io.grpc.Status;
import io.tabula.client.Cell;
import io.tabula.client.CheckAndMutate;
import io.tabula.client.Filter;
import io.tabula.client.MutationResult;
import io.tabula.client.Query;
import io.tabula.client.ReadModifyWrite;
import io.tabula.client.Row;
import io.tabula.client.RowMutation;
import io.tabula.client.TabulaClient;
import io.tabula.client.TabulaException;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every operation of the client end to end against one in-JVM node: what a mutation of
 * each kind leaves in the row, per-row batch results, both branches of check-and-mutate,
 * read-modify-write, filtered point reads, every query option compared with
 * {@link QueryModel}, and the codes and messages of the errors a node answers with.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class ClientOperationsTest {
  private static final String TABLE = "ops";
  private static final String MODEL_TABLE = "model";

  @TempDir
  static Path dir;

  private static InJvmNode node;
  private static TabulaClient client;

  @BeforeAll
  static void start() {
    node = InJvmNode.start(dir);
    client = node.client;
    join(client.admin().createTable(TABLE, "f", "g"));
    join(client.admin().createTable(MODEL_TABLE, "f", "g"));
  }

  @AfterAll
  static void stop() {
    if (node != null) {
      node.close();
    }
  }

  @Test
  void oneMutationSetsAndDeletesInTheOrderGiven() {
    join(client.apply(TABLE, RowMutation.create("m1")
        .setCell("f", "a", t(1), "a1").setCell("f", "a", t(2), "a2").setCell("f", "a", t(3), "a3")
        .setCell("f", "a", t(4), "a4").setCell("f", "b", t(5), "b5")
        .setCell("g", "c", t(7), "c7").setCell("g", "d", t(8), "d8")));
    join(client.apply(TABLE, RowMutation.create("m1")
        .deleteCells("f", "a", t(2), t(4))
        .deleteFamily("g")
        .setCell("g", "e", t(9), "e9")
        .setCell("f", "b", t(6), "b6")));
    assertEquals(List.of("f:a@4=a4", "f:a@1=a1", "f:b@6=b6", "f:b@5=b5", "g:e@9=e9"), cells(read("m1")),
        "[2, 4) deleted from f:a, g emptied before g:e was set");

    join(client.apply(TABLE, RowMutation.create("m1").deleteCells("f", "a").deleteCells("f", "b", t(6), 0)));
    assertEquals(List.of("f:b@5=b5", "g:e@9=e9"), cells(read("m1")));

    join(client.apply(TABLE, RowMutation.create("m1").setCell("f", "x", t(1), "gone").deleteRow()
        .setCell("f", "y", t(2), "kept")));
    assertEquals(List.of("f:y@2=kept"), cells(read("m1")), "only what was set after deleteRow remains");

    join(client.apply(TABLE, RowMutation.create("m1").deleteRow()));
    assertEquals(Optional.empty(), join(client.readRow(TABLE, "m1")));
  }

  @Test
  void aCellAtTheServersTimeGetsACurrentTimestamp() {
    long before = System.currentTimeMillis() * 1000;
    join(client.apply(TABLE, RowMutation.create("now").setCell("f", "q", "v")));
    long ts = read("now").cells().get(0).timestampMicros();
    assertTrue(ts >= before - 60_000_000L && ts <= System.currentTimeMillis() * 1000 + 60_000_000L,
        "server time " + ts + " is not near now (" + before + ")");
  }

  @Test
  void aBatchReportsEveryRowInOrderAndABadRowFailsAlone() {
    List<RowMutation> batch = List.of(
        RowMutation.create("b0").setCell("f", "q", t(1), "v0"),
        RowMutation.create("b1").setCell("f", "q", t(1), "v1"),
        RowMutation.create("b2").setCell("nope", "q", t(1), "unknown family"),
        RowMutation.create("b3"),
        RowMutation.create("b4").setCell("g", "q", t(1), "v4").deleteCells("g", "q", t(5), t(6)));
    List<MutationResult> results = join(client.applyBatch(TABLE, batch));

    assertEquals(5, results.size());
    for (int i = 0; i < 5; i++) {
      assertEquals(i, results.get(i).index());
      assertEquals(ByteString.copyFromUtf8("b" + i), results.get(i).key());
    }
    assertEquals(List.of(true, true, false, false, true), results.stream().map(MutationResult::ok).toList());
    TabulaException unknownFamily = results.get(2).error().orElseThrow();
    assertEquals(Status.Code.NOT_FOUND, unknownFamily.code());
    assertTrue(unknownFamily.getMessage().contains("nope"), unknownFamily.getMessage());
    assertEquals(Status.Code.INVALID_ARGUMENT, results.get(3).error().orElseThrow().code());

    assertEquals(List.of("f:q@1=v0"), cells(read("b0")));
    assertEquals(List.of("f:q@1=v1"), cells(read("b1")));
    assertEquals(List.of("g:q@1=v4"), cells(read("b4")));
    assertEquals(Optional.empty(), join(client.readRow(TABLE, "b2")), "the bad row wrote nothing");
  }

  @Test
  void checkAndMutateAppliesTheBranchThePredicateChooses() {
    join(client.apply(TABLE, RowMutation.create("cm-on").setCell("f", "flag", t(1), "on")));
    join(client.apply(TABLE, RowMutation.create("cm-off").setCell("f", "flag", t(1), "off")));
    Filter isOn = Filter.chain(Filter.column("f", "flag"), Filter.valueEquals(ByteString.copyFromUtf8("on")));

    for (String row : List.of("cm-on", "cm-off", "cm-missing")) {
      boolean matched = join(client.checkAndMutate(TABLE, CheckAndMutate.of(isOn,
          RowMutation.create(row).setCell("f", "result", t(2), "matched"),
          RowMutation.create(row).setCell("f", "result", t(2), "otherwise"))));
      assertEquals(row.equals("cm-on"), matched, row);
      assertEquals("f:result@2=" + (matched ? "matched" : "otherwise"),
          cells(read(row)).stream().filter(c -> c.startsWith("f:result")).findFirst().orElseThrow(), row);
    }

    assertFalse(join(client.checkAndMutate(TABLE, CheckAndMutate.ifMatches(Filter.column("f", "absent"),
        RowMutation.create("cm-on").deleteRow()))));
    assertTrue(join(client.readRow(TABLE, "cm-on")).isPresent(), "a branch with no mutations changes nothing");
    assertTrue(join(client.checkAndMutate(TABLE, CheckAndMutate.unlessMatches(Filter.column("f", "flag"),
        RowMutation.create("cm-on").deleteRow()))));
    assertTrue(join(client.readRow(TABLE, "cm-on")).isPresent());
  }

  @Test
  void readModifyWriteIncrementsAndAppendsInOrder() {
    Row first = join(client.readModifyWrite(TABLE, ReadModifyWrite.create("rmw").increment("f", "n", 5)
        .append("f", "s", "ab")));
    assertEquals(5, first.latest("f", "n").orElseThrow().valueAsLong(), "a missing counter counts as 0");
    assertEquals("ab", first.latest("f", "s").orElseThrow().valueUtf8());

    Row second = join(client.readModifyWrite(TABLE, ReadModifyWrite.create("rmw").increment("f", "n", 3)
        .increment("f", "n", -10).append("f", "s", "cd").append("f", "s", "ef")));
    assertEquals(-2, second.latest("f", "n").orElseThrow().valueAsLong());
    assertEquals("abcdef", second.latest("f", "s").orElseThrow().valueUtf8());
    assertEquals(-2, read("rmw").latest("f", "n").orElseThrow().valueAsLong(), "the result was written");

    join(client.apply(TABLE, RowMutation.create("rmw").setCell("f", "n", t(1), 100L)));
    Row third = join(client.readModifyWrite(TABLE, ReadModifyWrite.create("rmw").increment("f", "n", 1)));
    assertEquals(-1, third.latest("f", "n").orElseThrow().valueAsLong(),
        "the newest version is incremented, not the one at timestamp 1");
  }

  @Test
  void aPointReadReturnsOnlyWhatTheFilterPasses() {
    join(client.apply(TABLE, RowMutation.create("pr").setCell("f", "a", t(1), "x").setCell("f", "a", t(2), "y")
        .setCell("f", "b", t(1), "z").setCell("g", "a", t(1), "w")));
    ByteString key = ByteString.copyFromUtf8("pr");
    assertEquals(List.of("f:a@2=y", "f:a@1=x"), cells(join(client.readRow(TABLE, key, Filter.column("f", "a")))
        .orElseThrow()));
    assertEquals(List.of("f:a@2=y", "f:b@1=z", "g:a@1=w"), cells(join(client.readRow(TABLE, key,
        Filter.latest(1))).orElseThrow()));
    Row labelled = join(client.readRow(TABLE, key, Filter.chain(Filter.family("g"), Filter.label("seen"))))
        .orElseThrow();
    assertEquals(List.of("seen"), labelled.cells().get(0).labels());
    assertEquals(Optional.empty(), join(client.readRow(TABLE, key, Filter.valueEquals(ByteString.copyFromUtf8(
        "none")))), "a row with no cell passing is no row");
    assertEquals(Optional.empty(), join(client.readRow(TABLE, ByteString.copyFromUtf8("absent"), null)));
  }

  @Test
  void exactMatchFiltersMatchBytesWithRegexMetacharactersAndNonAscii() {
    ByteString binary = bytes(0x00, 0xff, '\n', '.', '*');
    join(client.apply(TABLE, RowMutation.create("meta")
        .setCell("f", "a.b*[c] é", t(1), "exact")
        .setCell("f", "aXb*[c] é", t(1), "a '.' that matched any character")
        .setCell("f", "a.bbb[c] é", t(1), "a '*' that repeated")
        .setCell("g", ByteString.copyFromUtf8("v"), t(1), binary)
        .setCell("g", ByteString.copyFromUtf8("w"), t(1), bytes(0x00, 0xff, '\n', 'X', '*'))));
    List<Row> rows = join(client.readRows(Query.table(TABLE).rowKey("meta").column("f", "a.b*[c] é")));
    assertEquals(List.of("f:a.b*[c] é@1=exact"), cells(rows.get(0)));
    Row row = join(client.readRow(TABLE, ByteString.copyFromUtf8("meta"), Filter.valueEquals(binary))).orElseThrow();
    assertEquals(1, row.cells().size());
    assertEquals("v", row.cells().get(0).qualifierUtf8());
  }

  @Test
  void everyQueryOptionReturnsWhatTheModelSays() {
    long seed = Long.getLong("tabula.seed", System.nanoTime());
    System.out.println("ClientOperationsTest seed = " + seed + " (rerun with -Dtabula.seed=" + seed + ")");
    Random random = new Random(seed);
    QueryModel model = new QueryModel(MODEL_TABLE, new Random(7));
    for (MutationResult r : join(client.applyBatch(MODEL_TABLE, model.mutations()))) {
      assertTrue(r.ok(), () -> "writing the model's row " + QueryModel.name(r.key()) + ": " + r.error());
    }
    assertEquals(model.all(), join(client.readRows(Query.table(MODEL_TABLE))));
    for (int i = 0; i < 150; i++) {
      QueryModel.Case c = model.randomCase(random);
      List<Row> got = join(client.readRows(c.query()));
      assertEquals(QueryModel.render(c.expected()), QueryModel.render(got), "seed " + seed + ", query " + i + ":"
          + c.description());
      assertEquals(c.expected(), got, "labels, values or keys differ beyond their rendering");
    }
  }

  @Test
  void anUnknownTableIsNotFound() throws InterruptedException {
    String missing = "no-such-table";
    assertFailure(Status.Code.NOT_FOUND, missing, client.apply(missing, RowMutation.create("r")
        .setCell("f", "q", t(1), "v")));
    assertFailure(Status.Code.NOT_FOUND, missing, client.readRow(missing, "r"));
    assertFailure(Status.Code.NOT_FOUND, missing, client.readRows(Query.table(missing)));
    assertFailure(Status.Code.NOT_FOUND, missing, client.readModifyWrite(missing, ReadModifyWrite.create("r")
        .increment("f", "q", 1)));
    MutationResult r = join(client.applyBatch(missing, List.of(RowMutation.create("r")
        .setCell("f", "q", t(1), "v")))).get(0);
    assertEquals(Status.Code.NOT_FOUND, r.error().orElseThrow().code());

    TabulaException e = scanFailure(Query.table(missing));
    assertEquals(Status.Code.NOT_FOUND, e.code());
  }

  @Test
  void aBadFilterIsAnInvalidArgumentNamingTheField() throws InterruptedException {
    Filter bad = Filter.valueRegex("(unclosed");
    assertFailure(Status.Code.INVALID_ARGUMENT, "filter", client.readRows(Query.table(TABLE).filter(bad)));
    assertFailure(Status.Code.INVALID_ARGUMENT, "filter", client.readRow(TABLE, ByteString.copyFromUtf8("r"), bad));
    assertFailure(Status.Code.INVALID_ARGUMENT, "predicate_filter", client.checkAndMutate(TABLE,
        CheckAndMutate.ifMatches(bad, RowMutation.create("r").setCell("f", "q", t(1), "v"))));
    TabulaException e = scanFailure(Query.table(TABLE).qualifierRegex("[z-a]"));
    assertEquals(Status.Code.INVALID_ARGUMENT, e.code());
    assertTrue(e.getMessage().contains("filter"), e.getMessage());
    // The client is still fine after the failures.
    assertTrue(join(client.readRows(Query.table(TABLE).limit(1))).size() <= 1);
  }

  /** The error a Flow subscriber to the query's scan is told of. */
  private static TabulaException scanFailure(Query q) throws InterruptedException {
    CountingSubscriber s = new CountingSubscriber();
    client.scan(q).subscribe(s);
    s.awaitSubscription();
    s.request(Long.MAX_VALUE);
    return assertInstanceOf(TabulaException.class, s.awaitFailure(), "the scan should fail with a TabulaException");
  }

  private static void assertFailure(Status.Code code, String named, CompletionStage<?> stage) {
    CompletionException e = assertThrows(CompletionException.class, () -> stage.toCompletableFuture()
        .orTimeout(30, TimeUnit.SECONDS).join());
    TabulaException t = assertInstanceOf(TabulaException.class, e.getCause());
    assertEquals(code, t.code(), t.getMessage());
    assertTrue(t.getMessage().contains(named), "message '" + t.getMessage() + "' should name '" + named + "'");
  }

  private static Row read(String key) {
    return join(client.readRow(TABLE, key)).orElseThrow(() -> new AssertionError("row " + key + " is missing"));
  }

  /** The row's cells as family:qualifier@milliseconds=value, in the order read. */
  private static List<String> cells(Row row) {
    return row.cells().stream().map(ClientOperationsTest::cell).toList();
  }

  private static String cell(Cell c) {
    return c.family() + ":" + c.qualifierUtf8() + "@" + c.timestampMicros() / 1_000 + "=" + c.valueUtf8();
  }

  /** A timestamp of {@code millis} milliseconds, in microseconds (the node takes whole milliseconds only). */
  private static long t(int millis) {
    return millis * 1_000L;
  }

  static <T> T join(CompletionStage<T> stage) {
    return stage.toCompletableFuture().orTimeout(60, TimeUnit.SECONDS).join();
  }
}
