package io.tabula.app;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import io.tabula.client.Cell;
import io.tabula.client.Query;
import io.tabula.client.Row;
import io.tabula.client.RowMutation;
import io.tabula.client.TabulaClient;
import io.tabula.cluster.TabulaNode;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * The cbt-like commands of {@code tabula}, run through {@link Main#commandLine(Map)} against
 * one in-JVM node, with their output and error streams captured and an environment of the
 * test's making: what each prints, its exit code, that a failure is exactly one line on the
 * error stream, and where the connection options may come from.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class CliTest {
  @TempDir
  static Path dataDir;

  @TempDir
  Path files;

  private static TabulaNode node;
  private static TabulaClient client;
  private static String endpoint;

  @BeforeAll
  static void start() {
    node = TabulaNode.start(ConfigFactory.parseMap(Map.of("tabula.node.data-dir", dataDir.toString(),
        "tabula.node.grpc-port", 0, "tabula.node.http-port", 0)));
    endpoint = "127.0.0.1:" + node.grpcPort();
    client = TabulaClient.connect(endpoint);
  }

  @AfterAll
  static void stop() {
    if (client != null) {
      client.close();
    }
    if (node != null) {
      node.close();
    }
  }

  /** What a command line printed, and its exit code. */
  private record Run(int code, String out, String err) {
    /** The error stream's lines. */
    List<String> errLines() {
      return err.lines().toList();
    }

    /** The row keys of rows printed in the cbt style: each follows a line of dashes. */
    List<String> keys() {
      List<String> lines = out.lines().toList();
      List<String> keys = new ArrayList<>();
      for (int i = 0; i + 1 < lines.size(); i++) {
        if (lines.get(i).equals("-".repeat(40))) {
          keys.add(lines.get(i + 1));
        }
      }
      return keys;
    }

    void assertOk() {
      assertEquals(0, code, () -> "exit code; stderr: " + err);
      assertEquals("", err);
    }
  }

  /** Runs {@code tabula args... --endpoint <the node>}. */
  private static Run tabula(String... args) {
    String[] full = Arrays.copyOf(args, args.length + 2);
    full[args.length] = "--endpoint";
    full[args.length + 1] = endpoint;
    return tabulaAt(full);
  }

  /** Runs {@code tabula args...} as given, in an environment without BIGTABLE_EMULATOR_HOST. */
  private static Run tabulaAt(String... args) {
    return tabulaIn(Map.of(), args);
  }

  /** Runs {@code tabula args...} as given, in {@code environment}. */
  private static Run tabulaIn(Map<String, String> environment, String... args) {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    CommandLine cl = Main.commandLine(environment);
    cl.setOut(new PrintWriter(out, true));
    cl.setErr(new PrintWriter(err, true));
    int code = cl.execute(args);
    return new Run(code, out.toString(), err.toString());
  }

  private static void assertOneErrorLine(Run r, int code, String start) {
    assertEquals(code, r.code(), () -> "exit code; stderr: " + r.err());
    assertEquals(1, r.errLines().size(), () -> "one line on stderr, got: " + r.err());
    assertTrue(r.err().startsWith(start), () -> "stderr should start with '" + start + "': " + r.err());
  }

  private static long count(String table) {
    Run r = tabula("count", table);
    r.assertOk();
    return Long.parseLong(r.out().strip());
  }

  /** Every row of a table as key -> column -> newest value, read with the client. */
  private static Map<String, Map<String, String>> contents(String table) {
    Map<String, Map<String, String>> rows = new TreeMap<>();
    for (Row row : client.readRows(Query.table(table).versions(1)).toCompletableFuture().join()) {
      Map<String, String> cells = new TreeMap<>();
      for (Cell c : row.cells()) {
        cells.put(c.family() + ":" + c.qualifierUtf8(), c.valueUtf8());
      }
      rows.put(row.keyUtf8(), cells);
    }
    return rows;
  }

  private Path write(String name, String text) throws IOException {
    return Files.writeString(files.resolve(name), text, StandardCharsets.UTF_8);
  }

  @Test
  void createsListsAndChangesTablesAndFamilies() {
    tabula("createtable", "admin", "families=cf:maxversions=1,other").assertOk();
    Run ls = tabula("ls");
    ls.assertOk();
    assertTrue(ls.out().lines().anyMatch("admin"::equals), ls.out());

    tabula("createfamily", "admin", "extra").assertOk();
    tabula("setgcpolicy", "admin", "other", "maxage=7d or maxversions=2").assertOk();
    Run families = tabula("ls", "admin");
    families.assertOk();
    assertEquals(List.of("Family Name  GC Policy", "-----------  ---------", "cf           maxversions=1",
        "extra        never", "other        maxage=7d or maxversions=2"), families.out().lines().toList());

    assertOneErrorLine(tabula("createtable", "admin"), 1, "tabula: ALREADY_EXISTS: ");
    assertOneErrorLine(tabula("setgcpolicy", "admin", "cf", "maxversions=x"), 2, "tabula: gc policy");
    assertOneErrorLine(tabula("createtable", "bad", "families=cf:sometimes"), 2, "tabula: family cf: gc policy");
    tabula("createfamily", "admin", "visits:intsum").assertOk();
    assertOneErrorLine(tabula("createfamily", "admin", "visits:intavg"), 2, "tabula: visits:intavg: the type");

    tabula("deletetable", "admin").assertOk();
    assertFalse(tabula("ls").out().lines().anyMatch("admin"::equals));
  }

  @Test
  void updatetableProtectsATableFromDeletion() {
    tabula("createtable", "kept", "families=cf,old").assertOk();
    Run on = tabula("updatetable", "kept", "deletion-protection=enabled");
    on.assertOk();
    assertEquals("deletion-protection=enabled", on.out().strip());
    Run refused = tabula("deletetable", "kept");
    assertEquals(1, refused.code(), refused.err());
    assertTrue(refused.err().contains("protected from deletion"), refused.err());
    assertTrue(tabula("ls").out().lines().anyMatch("kept"::equals));
    assertEquals("deletion-protection=enabled", tabula("updatetable", "kept").out().strip());
    assertOneErrorLine(tabula("updatetable", "kept", "deletion-protection=maybe"), 2,
        "tabula: deletion-protection=maybe: must be enabled or disabled");
    Run off = tabula("updatetable", "kept", "--deletion-protection=false");
    off.assertOk();
    assertEquals("deletion-protection=disabled", off.out().strip());
    tabula("deletetable", "kept").assertOk();
    assertFalse(tabula("ls").out().lines().anyMatch("kept"::equals));
  }

  @Test
  void backupsAreMadeListedRestoredAndDeletedAsWithCbt() {
    tabula("createtable", "ledger", "families=f").assertOk();
    tabula("set", "ledger", "r1", "f:a=one").assertOk();
    Run made = tabula("createbackup", "ledger-b", "ledger", "7d");
    made.assertOk();
    assertTrue(made.out().contains("ledger-b") && made.out().contains("READY"), made.out());
    tabula("set", "ledger", "r2", "f:a=two").assertOk();
    Run listed = tabula("listbackups");
    listed.assertOk();
    assertTrue(listed.out().lines().anyMatch(l -> l.startsWith("ledger-b") && l.contains("ledger")), listed.out());
    tabula("updatebackup", "ledger-b", "30d").assertOk();
    Run copied = tabula("copybackup", "ledger-b", "ledger-c", "10d");
    copied.assertOk();
    assertTrue(copied.out().contains("ledger-c") && copied.out().contains("READY"), copied.out());
    Run unknown = tabula("copybackup", "--source-instance=nowhere", "ledger-b", "ledger-d", "10d");
    assertEquals(1, unknown.code(), unknown.err());
    assertTrue(unknown.err().contains("source_backup"), unknown.err());
    tabula("restore", "ledger-copy", "ledger-b").assertOk();
    assertEquals(1, count("ledger-copy"), "the restored table has the row written before the backup");
    assertEquals(2, count("ledger"));
    assertOneErrorLine(tabula("createbackup", "x", "ledger", "soon"), 2, "tabula: ttl soon: must be a number");
    Run tooShort = tabula("createbackup", "x", "ledger", "1h");
    assertEquals(1, tooShort.code(), tooShort.err());
    assertTrue(tooShort.err().contains("backup.expire_time"), tooShort.err());
    tabula("deletebackup", "ledger-b").assertOk();
    assertFalse(tabula("listbackups").out().contains("ledger-b"));
    tabula("restore", "ledger-copy2", "ledger-c").assertOk();
    assertEquals(1, count("ledger-copy2"), "the copy restores without its source");
    assertEquals(1, count("ledger-copy"), "the restored table serves without its backup");
  }

  @Test
  void setThenLookupPrintsCellsInCbtStyle() {
    tabula("createtable", "cells", "families=f,g").assertOk();
    tabula("set", "cells", "r1", "--timestamp", "1000000", "f:a=old").assertOk();
    tabula("set", "cells", "r1", "--timestamp", "2000000", "f:a=new", "g:=say \"hi\"\nbye=1").assertOk();

    Run all = tabula("lookup", "cells", "r1");
    all.assertOk();
    assertEquals("""
        ----------------------------------------
        r1
          f:a                                      @ 1970/01/01-00:00:02.000000
            "new"
          f:a                                      @ 1970/01/01-00:00:01.000000
            "old"
          g:                                       @ 1970/01/01-00:00:02.000000
            "say \\"hi\\"\\nbye=1"
        """, all.out());

    Run newest = tabula("lookup", "cells", "r1", "columns=f:a", "versions=1");
    newest.assertOk();
    assertEquals(List.of("----------------------------------------", "r1",
        "  f:a                                      @ 1970/01/01-00:00:02.000000", "    \"new\""),
        newest.out().lines().toList());

    Run missing = tabula("lookup", "cells", "nothing-here");
    missing.assertOk();
    assertEquals("", missing.out());
    assertOneErrorLine(tabula("set", "cells", "r1", "novalue"), 2, "tabula: 'novalue' is not of the form");
  }

  @Test
  void readSelectsRowsColumnsVersionsAndCount() {
    tabula("createtable", "scan", "families=f,g").assertOk();
    List<RowMutation> rows = new ArrayList<>();
    for (int i = 0; i < 10; i++) {
      rows.add(RowMutation.create("k" + i).setCell("f", "a", 1000, "a" + i).setCell("f", "a", 2000, "A" + i)
          .setCell("g", "b", 1000, "b" + i));
    }
    rows.add(RowMutation.create("other").setCell("f", "a", 1000, "x"));
    client.applyBatch("scan", rows).toCompletableFuture().join().forEach(r -> assertTrue(r.ok()));

    assertEquals(List.of("k0", "k1", "k2", "k3", "k4", "k5", "k6", "k7", "k8", "k9"),
        tabula("read", "scan", "prefix=k").keys());
    assertEquals(List.of("k3", "k4", "k5"), tabula("read", "scan", "start=k3", "end=k6").keys());
    assertEquals(List.of("k8", "k9", "other"), tabula("read", "scan", "start=k8").keys());
    assertEquals(List.of("k0", "k1"), tabula("read", "scan", "end=k2").keys());
    assertEquals(List.of("k0", "k1", "k2"), tabula("read", "scan", "count=3").keys());
    assertEquals(List.of("k9", "k8"), tabula("read", "scan", "prefix=k", "reversed", "count=2").keys());

    Run columns = tabula("read", "scan", "prefix=k1", "columns=g:b");
    columns.assertOk();
    assertEquals(List.of("----------------------------------------", "k1",
        "  g:b                                      @ 1970/01/01-00:00:00.001000", "    \"b1\""),
        columns.out().lines().toList());
    Run versions = tabula("read", "scan", "prefix=k1", "columns=f", "versions=1");
    assertEquals(List.of("----------------------------------------", "k1",
        "  f:a                                      @ 1970/01/01-00:00:00.002000", "    \"A1\""),
        versions.out().lines().toList());
    assertEquals(2, tabula("read", "scan", "prefix=k1", "columns=f").out().lines()
        .filter(l -> l.startsWith("  f:a ")).count());

    assertEquals(11, count("scan"));
    Run prefixed = tabula("count", "scan", "prefix=k");
    prefixed.assertOk();
    assertEquals("10", prefixed.out().strip());

    tabula("deleterow", "scan", "k5").assertOk();
    assertEquals("9", tabula("count", "scan", "prefix=k").out().strip());
    assertEquals("", tabula("lookup", "scan", "k5").out());

    assertOneErrorLine(tabula("read", "scan", "bogus=1"), 2, "tabula: unknown argument 'bogus=1'");
    assertOneErrorLine(tabula("read", "scan", "prefix=k", "start=k1"), 2, "tabula: give prefix= or start=/end=");
  }

  @Test
  void importsTenThousandCsvRows() throws IOException {
    tabula("createtable", "csv", "families=f,g").assertOk();
    StringBuilder csv = new StringBuilder("rowkey,f:a,f:b,g:c\n");
    for (int i = 0; i < 10_000; i++) {
      csv.append(String.format("row%05d,a%d,", i, i));
      csv.append(i % 100 == 0 ? "\"comma, \"\"quote\"\" and\nnewline\"" : "b" + i);
      csv.append(i % 2 == 0 ? ",\"\"" : ",").append(i % 3 == 0 ? "\r\n" : "\n");
    }
    Path file = write("rows.csv", csv.toString());

    Run imported = tabula("import", "csv", file.toString());
    imported.assertOk();
    assertTrue(imported.out().matches("imported 10000 rows in [0-9]+\\.[0-9] s \\([0-9]+ rows/s\\)\n"),
        imported.out());
    assertEquals(10_000, count("csv"));

    Map<String, Map<String, String>> rows = contents("csv");
    assertEquals(Map.of("f:a", "a100", "f:b", "comma, \"quote\" and\nnewline", "g:c", ""), rows.get("row00100"));
    assertEquals(Map.of("f:a", "a101", "f:b", "b101"), rows.get("row00101"), "an unquoted empty field is no cell");
  }

  @Test
  void importsJsonLinesWithProgress() throws IOException {
    tabula("createtable", "json", "families=f").assertOk();
    Path file = write("rows.jsonl", """
        {"key":"j1","cells":{"f:a":"1","f:b":"two"}}

        { "cells" : { "f:" : "tab\\there \\u00e9 \\ud83d\\ude00" } , "key" : "j2" }
        """);
    Run imported = tabula("import", "json", file.toString(), "--progress");
    assertEquals(0, imported.code(), imported.err());
    assertTrue(imported.out().startsWith("imported 2 rows in "), imported.out());
    assertTrue(imported.err().contains("100%") && imported.err().contains("2 rows"), imported.err());
    assertEquals(Map.of("j1", Map.of("f:a", "1", "f:b", "two"), "j2", Map.of("f:", "tab\there é \uD83D\uDE00")),
        contents("json"));
  }

  @Test
  void exportThenImportRoundTripsInBothFormats() throws IOException {
    tabula("createtable", "source", "families=f,g").assertOk();
    List<RowMutation> rows = new ArrayList<>();
    for (int i = 0; i < 1_000; i++) {
      RowMutation m = RowMutation.create(String.format("r%04d", i)).setCell("f", "a", 1000, "v" + i);
      if (i % 7 == 0) {
        m.setCell("g", "odd, \"col\"", 1000, i % 14 == 0 ? "" : "line\r\nbreak, é");
      }
      rows.add(m);
    }
    client.applyBatch("source", rows).toCompletableFuture().join().forEach(r -> assertTrue(r.ok()));
    Map<String, Map<String, String>> expected = contents("source");

    for (String name : List.of("copy.csv", "copy.jsonl")) {
      String table = "copy" + (name.endsWith(".csv") ? "csv" : "json");
      Path file = files.resolve(name);
      Run exported = tabula("export", "source", file.toString());
      exported.assertOk();
      assertTrue(exported.out().startsWith("exported 1000 rows to "), exported.out());
      tabula("createtable", table, "families=f,g").assertOk();
      tabula("import", table, file.toString()).assertOk();
      assertEquals(count("source"), count(table));
      assertEquals(expected, contents(table), name);
    }

    Run part = tabula("export", "source", "-", "--format", "jsonl", "prefix=r000");
    part.assertOk();
    assertEquals(10, part.out().lines().count());
    assertEquals("{\"key\":\"r0000\",\"cells\":{\"f:a\":\"v0\",\"g:odd, \\\"col\\\"\":\"\"}}",
        part.out().lines().findFirst().orElseThrow());
  }

  @Test
  void aBadLineStopsTheImportNamingItsLineOrIsSkipped() throws IOException {
    tabula("createtable", "bad", "families=f").assertOk();
    tabula("createtable", "skipped", "families=f").assertOk();
    Path csv = write("bad.csv", "rowkey,f:a\nr1,x\nr2,y\nr3,\"bad\"x\nr4,z\n");

    Run stopped = tabula("import", "bad", csv.toString());
    assertOneErrorLine(stopped, 1, "tabula: " + csv + " line 4: unexpected 'x' after the closing quote");
    assertTrue(stopped.err().contains("the 2 rows before it were imported"), stopped.err());
    assertEquals(2, count("bad"));

    Run skipping = tabula("import", "skipped", csv.toString(), "--skip-bad");
    assertEquals(0, skipping.code());
    assertTrue(skipping.out().endsWith("; skipped 1 bad line\n"), skipping.out());
    assertEquals(List.of("tabula: skipped " + csv + " line 4: unexpected 'x' after the closing quote of field 2 "
        + "(a quote inside a quoted field is written \"\")"), skipping.errLines());
    assertEquals(3, count("skipped"));

    Path json = write("bad.jsonl", """
        {"key":"a","cells":{"f:q":"1"}}

        {"key":"b","cells":{"f:q":2}}
        """);
    assertOneErrorLine(tabula("import", "bad", json.toString()), 1,
        "tabula: " + json + " line 3: column 27: the value of \"f:q\" must be a string");

    Path fields = write("short.csv", "rowkey,f:a,f:b\nr1,x,y\nr2,x\n");
    assertOneErrorLine(tabula("import", "bad", fields.toString()), 1,
        "tabula: " + fields + " line 3: 2 fields, but the header has 3");
  }

  @Test
  void anUnknownTableIsOneLineWithNotFound() throws IOException {
    for (Run r : List.of(tabula("read", "nosuch"), tabula("ls", "nosuch"), tabula("count", "nosuch"),
        tabula("lookup", "nosuch", "r"), tabula("set", "nosuch", "r", "f:q=v"))) {
      assertOneErrorLine(r, 1, "tabula: NOT_FOUND: table nosuch not found");
      assertEquals("", r.out());
    }
    Path csv = write("rows.csv", "rowkey,f:a\nr1,x\n");
    assertOneErrorLine(tabula("import", "nosuch", csv.toString()), 1,
        "tabula: NOT_FOUND: table nosuch not found (" + csv + " line 2, row r1)");
  }

  @Test
  void aNodeThatIsDownFailsInOneLineWithinTheTimeout() throws IOException {
    int closed = closedPort();
    for (String[] command : List.of(new String[] {"ls"}, new String[] {"read", "t"},
        new String[] {"createtable", "t"})) {
      long start = System.nanoTime();
      Run r = tabulaAt(Stream.concat(Arrays.stream(command),
          Stream.of("--endpoint", "127.0.0.1:" + closed, "--timeout", "1s")).toArray(String[]::new));
      long seconds = TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - start);
      assertOneErrorLine(r, 1, "tabula: UNAVAILABLE: cannot reach Tabula at 127.0.0.1:" + closed);
      assertEquals("", r.out());
      // Generous: the deadline is 1 s; this only catches a command that waits for the client's default 60 s.
      assertTrue(seconds < 15, command[0] + " took " + seconds + " s");
    }
  }

  @Test
  void connectionOptionsMayComeBeforeTheCommandAsCbtTakesThem() {
    Run created = tabulaAt("--endpoint", endpoint, "--timeout", "10s", "createtable", "before", "families=f");
    created.assertOk();
    Run ls = tabulaAt("--endpoint", endpoint, "ls");
    ls.assertOk();
    assertTrue(ls.out().lines().anyMatch("before"::equals), ls.out());
  }

  @Test
  void anOptionAfterTheCommandWinsOverTheSameOptionBeforeIt() throws IOException {
    int closed = closedPort();
    tabulaAt("--endpoint", "127.0.0.1:" + closed, "ls", "--endpoint", endpoint).assertOk();
    assertOneErrorLine(tabulaAt("--endpoint", endpoint, "ls", "--endpoint", "127.0.0.1:" + closed, "--timeout", "1s"),
        1, "tabula: UNAVAILABLE: cannot reach Tabula at 127.0.0.1:" + closed);
  }

  @Test
  void theEndpointComesFromBigtableEmulatorHostUnlessAFlagNamesOne() throws IOException {
    Run ls = tabulaIn(Map.of("BIGTABLE_EMULATOR_HOST", endpoint), "ls");
    ls.assertOk();

    int closed = closedPort();
    Map<String, String> elsewhere = Map.of("BIGTABLE_EMULATOR_HOST", "127.0.0.1:" + closed);
    assertOneErrorLine(tabulaIn(elsewhere, "ls", "--timeout", "1s"), 1,
        "tabula: UNAVAILABLE: cannot reach Tabula at 127.0.0.1:" + closed);
    tabulaIn(elsewhere, "ls", "--endpoint", endpoint).assertOk();
    tabulaIn(elsewhere, "--endpoint", endpoint, "ls").assertOk();

    assertOneErrorLine(tabulaIn(Map.of("BIGTABLE_EMULATOR_HOST", "nohost"), "ls"), 2,
        "tabula: BIGTABLE_EMULATOR_HOST: endpoint 'nohost'");
  }

  @Test
  void connectionOptionsBeforeTheServerAreAUsageError() {
    assertOneErrorLine(tabulaAt("--endpoint", endpoint, "server"), 2,
        "tabula: --endpoint is an option of the data and admin commands; 'server' does not take it");
  }

  @Test
  void helpNamesTheServerAndTheCommands() {
    Run top = tabulaAt("--help");
    top.assertOk();
    assertTrue(top.out().contains("server") && top.out().contains("createtable") && top.out().contains("--endpoint"),
        top.out());
    Run server = tabulaAt("server", "--help");
    server.assertOk();
    assertTrue(server.out().contains("--data") && server.out().contains("--port"), server.out());
  }

  private static int closedPort() throws IOException {
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      return s.getLocalPort();
    }
  }

  @Test
  void watchPrintsEachChangeAsItIsCommittedOneLinePerMutation() throws Exception {
    tabula("createtable", "watched", "families=f,g", "change-stream-retention-period=1d").assertOk();
    String from = Instant.now().toString();
    CompletableFuture<Run> watching = CompletableFuture.supplyAsync(() -> tabula("watch", "watched", "--from", from,
        "--count", "3"));
    tabula("set", "watched", "r1", "--timestamp", "1000", "f:a=one", "g:b=two \"q\"").assertOk();
    client.apply("watched", RowMutation.create("r1").deleteCells("f", "a")).toCompletableFuture().join();
    tabula("deleterow", "watched", "r 2").assertOk();
    List<String> expected = List.of("r1  T  set f:a @ 1970/01/01-00:00:00.001000 = \"one\"",
        "r1  T  set g:b @ 1970/01/01-00:00:00.001000 = \"two \\\"q\\\"\"", "r1  T  delete f:a",
        "\"r 2\"  T  delete family f", "\"r 2\"  T  delete family g");
    Run watched = watching.get(60, TimeUnit.SECONDS);
    watched.assertOk();
    String commitTime = "\\d{4}/\\d\\d/\\d\\d-\\d\\d:\\d\\d:\\d\\d\\.\\d{6}";
    assertEquals(expected, watched.out().lines().map(l -> l.replaceFirst("  " + commitTime + "  ", "  T  ")).toList());

    Run again = tabula("watch", "watched", "--from", "-5m", "--until", "now");
    again.assertOk();
    assertEquals(watched.out(), again.out(), "the same changes, read again up to an end");

    tabula("createtable", "unwatched", "families=f").assertOk();
    assertOneErrorLine(tabula("watch", "unwatched"), 1, "tabula: FAILED_PRECONDITION: ");
    assertOneErrorLine(tabula("watch", "watched", "--from", "yesterday"), 2, "tabula: --from yesterday: must be");
    assertOneErrorLine(tabula("createtable", "w2", "change-stream-retention-period=1w"), 2,
        "tabula: change-stream-retention-period 1w: must be a number and a unit");
  }

  @Test
  void usageMistakesAreOneLineWithExitTwo() {
    assertOneErrorLine(tabula("import", "t", "data.txt"), 2, "tabula: cannot tell the format of 'data.txt'");
    assertOneErrorLine(tabula("import", "t", files.resolve("none.csv").toString()), 2, "tabula: no such file: ");
    assertOneErrorLine(tabulaAt("ls", "--endpoint", "nohost"), 2, "tabula: --endpoint: endpoint 'nohost'");
    assertOneErrorLine(tabula("ls", "--timeout", "soon"), 2, "tabula: Invalid value for option '--timeout'");
    assertOneErrorLine(tabula("nosuchcommand"), 2, "tabula: Unmatched argument");
  }
  @Test
  void clusterCommandsGoThroughManagementHttp() {
    String http = "127.0.0.1:" + node.httpPort();
    tabula("createtable", "ops", "families=f", "splits=m").assertOk();
    Run nodes = tabulaAt("nodes", "--http", http);
    nodes.assertOk();
    assertTrue(nodes.out().lines().anyMatch(l -> l.startsWith("node1") && l.contains(" up ")), nodes.out());

    Run tablets = tabulaAt("tablets", "ops", "--http", http);
    tablets.assertOk();
    List<String> rows = tablets.out().lines().filter(l -> l.startsWith("ops ")).toList();
    assertEquals(2, rows.size(), tablets.out());
    assertTrue(rows.get(0).contains("\"m\"") && rows.get(0).contains("node1"), tablets.out());

    String tablet = rows.get(0).split("\\s+")[1];
    Run move = tabulaAt("move", tablet, "node1", "--http", http);
    move.assertOk();
    assertEquals("moving " + tablet + " to node1\n", move.out(), "a move to where it is is nothing to do");
    assertOneErrorLine(tabulaAt("move", tablet, "elsewhere", "--http", http), 1,
        "tabula: node elsewhere is not an Up node");
    assertOneErrorLine(tabulaAt("move", "nosuch-1", "node1", "--http", http), 1, "tabula: tablet nosuch-1 is not known");
    assertOneErrorLine(tabulaAt("drain", "elsewhere", "--http", http), 1, "tabula: node elsewhere is not a member");
    assertOneErrorLine(tabulaAt("nodes", "--http", "127.0.0.1:1"), 1, "tabula: cannot reach Management HTTP");
  }

  @Test
  void topListsTheBusiestTabletsFirst() throws InterruptedException {
    String http = "127.0.0.1:" + node.httpPort();
    tabula("createtable", "busy", "families=f", "splits=m").assertOk();
    long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(30);
    List<String> rows = List.of();
    while (System.nanoTime() < deadline) {
      for (int i = 0; i < 200; i++) {
        client.apply("busy", io.tabula.client.RowMutation.create("z" + i).setCell("f", "q", "v"))
            .toCompletableFuture().join();
      }
      Run top = tabulaAt("top", "busy", "--http", http);
      top.assertOk();
      rows = top.out().lines().filter(l -> l.startsWith("busy ")).toList();
      if (rows.size() == 2 && Long.parseLong(rows.get(0).split("\\s+")[3]) > 0) {
        break;
      }
    }
    assertEquals(2, rows.size(), rows.toString());
    assertEquals("\"m\"", rows.get(0).split("\\s+")[5],
        "the tablet written to, from m to the end, comes first with its writes per second: " + rows);
    assertTrue(Long.parseLong(rows.get(0).split("\\s+")[3]) > 0, rows.toString());
    assertEquals("0", rows.get(1).split("\\s+")[3], "the other had no writes: " + rows);
    Run one = tabulaAt("top", "--limit", "1", "--http", http);
    one.assertOk();
    assertEquals(1, one.out().lines().skip(1).count(), one.out());
    assertOneErrorLine(tabulaAt("top", "--limit", "0", "--http", http), 2, "tabula: --limit must be at least 1");
  }
}
