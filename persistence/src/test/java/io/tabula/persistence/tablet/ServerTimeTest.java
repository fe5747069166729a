package io.tabula.persistence.tablet;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.tabula.persistence.model.Cell;
import io.tabula.persistence.model.Mutation;
import io.tabula.persistence.model.RowMutation;
import io.tabula.persistence.read.ReadFilter;
import io.tabula.persistence.schema.ColumnFamily;
import io.tabula.persistence.schema.TableSchema;
import io.tabula.persistence.storage.FileStorage;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A tablet's server-assigned timestamps never go below the highest it handed out (fencing
 * review S2; docs/formats/manifest.md, "Server time"): across a move, a crash, a restart, a
 * clock stepped back, a split and a merge, a later server-time write to a cell is its latest
 * version even where the clock is behind the earlier write's. Each node is a {@link
 * TabletServer} with a clock of its own over one storage root; the clocks are 100 ms apart.
 * A client's explicit timestamps, however far ahead, never raise the floor.
 */
class ServerTimeTest {
  private static final TableSchema SCHEMA = TableSchema.of(ColumnFamily.of("f"));
  private static final byte[] ALL = new byte[0];
  /** The clock of the node ahead, in µs (a sub-millisecond part that server times round away). */
  private static final long AHEAD = 1_700_000_000_100_456L;
  /** The clock of the node behind: 100 ms earlier. */
  private static final long BEHIND = AHEAD - 100_000;
  /** The server time the node ahead hands out: its clock in whole milliseconds. */
  private static final long AHEAD_MILLIS = AHEAD / 1000 * 1000;
  /** A client's explicit timestamp ten years ahead. */
  private static final long FUTURE = AHEAD + 10L * 365 * 24 * 3600 * 1_000_000;

  @TempDir
  Path root;

  private final List<TabletServer> nodes = new ArrayList<>();
  private final List<String> failures = new ArrayList<>();

  @AfterEach
  void stop() {
    nodes.forEach(TabletServer::abandon);
    assertEquals(List.of(), failures, "background failures");
  }

  /** A cluster-style node named {@code name} whose clock reads {@code clock}. */
  private TabletServer node(String name, AtomicLong clock) throws IOException {
    TabletServer n = TabletServer.startOnDemand(new FileStorage(root), TabletServer.Options.defaults(name),
        clock::get, t -> SCHEMA, (what, e) -> failures.add(what + ": " + e));
    nodes.add(n);
    return n;
  }

  private TabletServer node(String name, long clock) throws IOException {
    return node(name, new AtomicLong(clock));
  }

  /** The node {@code name}, opened as a single process (it recovers every tablet and its own log). */
  private TabletServer process(String name, long clock) throws IOException {
    TabletServer n = TabletServer.open(new FileStorage(root), TabletServer.Options.defaults(name), () -> clock,
        t -> SCHEMA, (what, e) -> failures.add(what + ": " + e));
    nodes.add(n);
    return n;
  }

  @Test
  void aTabletMovedToANodeWhoseClockIsBehindHandsOutNoServerTimeBelowItsLast() throws IOException {
    TabletServer ahead = node("n1", AHEAD);
    Tablet t = ahead.openTablet("tbl", "t1", ALL, ALL, List.of()).tablet();
    writeAtServerTime(t, "r", "first");
    ahead.closeTablet("t1"); // a clean close: flushed, nothing to replay

    AtomicLong clock = new AtomicLong(BEHIND);
    TabletServer behind = node("n2", clock);
    Tablet moved = behind.openTablet("tbl", "t1", ALL, ALL, List.of()).tablet();
    // While the clock is behind, a server time is the highest handed out, no more: the writes
    // share its millisecond (one version of the cell), and the later sequence wins.
    assertALaterWriteIsLatest(moved, "r");
    writeAtServerTime(moved, "r", "third");
    assertLatest(moved, "r", "third", AHEAD_MILLIS);

    clock.set(AHEAD + 5_000_250);
    writeAtServerTime(moved, "r", "fourth");
    assertLatest(moved, "r", "fourth", AHEAD_MILLIS + 5_000_000); // the clock again, in whole milliseconds
  }

  @Test
  void aTabletRecoveredFromACrashedNodesLogHandsOutNoServerTimeBelowItsLast() throws IOException {
    TabletServer ahead = node("n1", AHEAD);
    Tablet t = ahead.openTablet("tbl", "t1", ALL, ALL, List.of()).tablet();
    writeAtServerTime(t, "r", "first"); // only in n1's log
    ahead.abandon();
    new FileStorage(root).fence("logs/n1");

    TabletServer behind = node("n2", BEHIND);
    Tablet recovered = behind.openTablet("tbl", "t1", ALL, ALL, List.of("n1")).tablet();
    assertALaterWriteIsLatest(recovered, "r");
  }

  /**
   * Cells a caller stamps itself from the tablet's server time (a read-modify-write) count as
   * handed out: applied with that time, their log record raises the floor of the next life, so
   * a later server-time write is not shadowed by them after a crash.
   */
  @Test
  void cellsStampedFromAServerTimeRaiseTheFloorOfTheNextLife() throws IOException {
    TabletServer ahead = node("n1", AHEAD);
    Tablet t = ahead.openTablet("tbl", "t1", ALL, ALL, List.of()).tablet();
    long stamped = t.nextServerTime();
    t.tryApply(RowMutation.of(b("r"), new Mutation.SetCell("f", b("q"), stamped, b("first"))), stamped).join();
    ahead.abandon();
    new FileStorage(root).fence("logs/n1");

    Tablet recovered = node("n2", BEHIND).openTablet("tbl", "t1", ALL, ALL, List.of("n1")).tablet();
    assertALaterWriteIsLatest(recovered, "r");
  }

  /** A restart whose clock was stepped back (an NTP step), after a crash (replay) or a clean stop (manifest). */
  @ParameterizedTest(name = "crash={0}")
  @ValueSource(booleans = {true, false})
  void aNodeRestartedWithItsClockSteppedBackHandsOutNoServerTimeBelowItsLast(boolean crash) throws IOException {
    TabletServer before = process("n1", AHEAD);
    writeAtServerTime(before.createTablet("tbl", "t1", ALL, ALL), "r", "first");
    if (crash) {
      before.abandon();
    } else {
      before.close();
    }
    TabletServer after = process("n1", BEHIND);
    Tablet t = after.tablet("t1");
    assertALaterWriteIsLatest(t, "r");
  }

  @Test
  void aClockSteppedBackWhileTheTabletIsOpenDoesNotTakeServerTimesBack() throws IOException {
    AtomicLong clock = new AtomicLong(AHEAD);
    Tablet t = node("n1", clock).openTablet("tbl", "t1", ALL, ALL, List.of()).tablet();
    writeAtServerTime(t, "r", "first");
    clock.set(BEHIND);
    assertALaterWriteIsLatest(t, "r");
  }

  @Test
  void theChildrenOfASplitHandOutNoServerTimeBelowTheParentsLast() throws IOException {
    TabletServer ahead = node("n1", AHEAD);
    Tablet t = ahead.openTablet("tbl", "t1", ALL, ALL, List.of()).tablet();
    writeAtServerTime(t, "c", "first");
    writeAtServerTime(t, "r", "first");
    ahead.split("t1", b("m"), "t2", "t3"); // the children are opened where they are placed next

    TabletServer behind = node("n2", BEHIND);
    Tablet left = behind.openTablet("tbl", "t2", ALL, b("m"), List.of()).tablet();
    Tablet right = behind.openTablet("tbl", "t3", b("m"), ALL, List.of()).tablet();
    assertALaterWriteIsLatest(left, "c");
    assertALaterWriteIsLatest(right, "r");
  }

  /**
   * The parent written on the node ahead is the left one, then the right one: the merged
   * tablet takes the higher of its parents' floors, whichever that is.
   */
  @ParameterizedTest(name = "left parent ahead={0}")
  @ValueSource(booleans = {true, false})
  void aMergedTabletHandsOutNoServerTimeBelowEitherParentsLast(boolean leftAhead) throws IOException {
    TabletServer ahead = node("n1", AHEAD);
    TabletServer behind = node("n2", BEHIND);
    TabletServer leftNode = leftAhead ? ahead : behind;
    TabletServer rightNode = leftAhead ? behind : ahead;
    writeAtServerTime(leftNode.openTablet("tbl", "t1", ALL, b("m"), List.of()).tablet(), "c", "first");
    writeAtServerTime(rightNode.openTablet("tbl", "t2", b("m"), ALL, List.of()).tablet(), "r", "first");
    leftNode.closeTablet("t1");
    rightNode.closeTablet("t2");

    behind.writeMergedManifest("tbl", "t1", "t2", "t3");
    Tablet merged = behind.openTablet("tbl", "t3", ALL, ALL, List.of()).tablet();
    assertALaterWriteIsLatest(merged, "c");
    assertALaterWriteIsLatest(merged, "r");
  }

  /**
   * A client's timestamp ten years ahead, in a row mutation that also took the server time and
   * in one of its own, raises no floor: neither in the tablet that took it, nor, after a crash
   * (the log) or a clean move (the manifest), on the next node, whose server times stay at the
   * highest server time handed out.
   */
  @ParameterizedTest(name = "crash={0}")
  @ValueSource(booleans = {true, false})
  void aClientTimestampFarAheadDoesNotDragServerTimesAlong(boolean crash) throws IOException {
    TabletServer ahead = node("n1", AHEAD);
    Tablet t = ahead.openTablet("tbl", "t1", ALL, ALL, List.of()).tablet();
    t.apply(RowMutation.of(b("r"), new Mutation.SetCell("f", b("server"), Mutation.SERVER_TIME, b("v")),
        new Mutation.SetCell("f", b("client"), FUTURE, b("v")))).join();
    t.apply(RowMutation.of(b("x"), new Mutation.SetCell("f", b("client"), FUTURE, b("v")))).join();
    writeAtServerTime(t, "y", "here");
    assertLatest(t, "y", "here", AHEAD_MILLIS);
    if (crash) {
      ahead.abandon();
      new FileStorage(root).fence("logs/n1");
    } else {
      ahead.closeTablet("t1");
    }

    Tablet moved = node("n2", BEHIND).openTablet("tbl", "t1", ALL, ALL, crash ? List.of("n1") : List.of())
        .tablet();
    writeAtServerTime(moved, "z", "there");
    assertLatest(moved, "z", "there", AHEAD_MILLIS); // the highest server time handed out, not the client's
  }

  private static void writeAtServerTime(Tablet t, String row, String value) {
    t.apply(RowMutation.of(b(row), new Mutation.SetCell("f", b("q"), Mutation.SERVER_TIME, b(value)))).join();
  }

  /**
   * A server-time write of "second" to {@code row} is its latest version, at the highest server
   * time handed out (the node ahead's), whatever the clock here says.
   */
  private static void assertALaterWriteIsLatest(Tablet t, String row) throws IOException {
    writeAtServerTime(t, row, "second");
    assertLatest(t, row, "second", AHEAD_MILLIS);
  }

  /** The latest version of {@code row}'s one column holds {@code value} at {@code timestamp}. */
  private static void assertLatest(Tablet t, String row, String value, long timestamp) throws IOException {
    Cell latest = t.read(b(row), ReadFilter.all().withMaxVersions(1)).orElseThrow().cells().get(0);
    assertEquals(value + "@" + timestamp, new String(latest.value(), StandardCharsets.UTF_8) + "@"
        + latest.timestamp(), "the latest version of " + row);
  }

  private static byte[] b(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }
}
