package io.tabula.actors.tablet;

import static io.tabula.actors.ActorTestConfig.await;
import static io.tabula.actors.ActorTestConfig.startWithJournalIn;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.bigtable.v2.RowFilter;
import com.google.protobuf.ByteString;
import io.tabula.actors.ActorTestConfig;
import io.tabula.actors.master.DirectoryCache;
import io.tabula.actors.master.Master;
import io.tabula.actors.master.TabletInfo;
import io.tabula.persistence.model.Mutation;
import io.tabula.persistence.model.Row;
import io.tabula.persistence.model.RowMutation;
import io.tabula.persistence.schema.GcPolicy;
import io.tabula.persistence.storage.FileStorage;
import io.tabula.persistence.storage.ForwardingStorage;
import io.tabula.persistence.storage.Storage;
import io.tabula.persistence.storage.WritableFile;
import io.tabula.persistence.tablet.MicrosClock;
import io.tabula.persistence.tablet.Tablet;
import io.tabula.persistence.tablet.TabletOptions;
import io.tabula.persistence.tablet.TabletServer;
import io.tabula.persistence.wal.CommitLogOptions;
import io.tabula.persistence.wal.Durability;
import io.tabula.protocol.errors.ErrorCode;
import io.tabula.protocol.errors.Refusal;
import io.tabula.streams.filter.FilteredRow;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.function.Function;
import java.util.stream.IntStream;
import org.apache.pekko.Done;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.FishingOutcomes;
import org.apache.pekko.actor.testkit.typed.javadsl.LogCapturingExtension;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.pattern.StatusReply;
import org.apache.pekko.persistence.typed.PersistenceId;
import org.apache.pekko.stream.SourceRef;
import org.apache.pekko.stream.javadsl.Sink;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * The tablet actor around a real engine on a temporary directory, with a real master (its
 * journal in the same directory) feeding the node's directory cache. Every message is
 * serialized, and replies go to test probes. The split test puts a probe in the master's
 * place to see, and answer, what the tablet tells it.
 */
@ExtendWith(LogCapturingExtension.class)
class TabletActorTest {
  private static final Duration WAIT = Duration.ofSeconds(20);
  private static final TabletSettings NEVER_SPLIT = new TabletSettings(1L << 40, Duration.ofMillis(200));

  @TempDir
  Path dir;

  private ActorTestKit kit;
  private ActorRef<Master.Command> master;
  private final DirectoryCache cache = new DirectoryCache();
  /** The tablets the spawned actors list as served, shared by them as on one node. */
  private final LocalTablets local = new LocalTablets();
  private TabletServer server;
  private String tabletId;

  @BeforeEach
  void start() throws IOException {
    kit = startWithJournalIn(dir.resolve("master"));
    master = kit.spawn(Master.create(PersistenceId.ofUniqueId("test-master"), MicrosClock.SYSTEM::nowMicros));
    TestProbe<StatusReply<?>> created = kit.createTestProbe();
    master.tell(new Master.CreateTable("t", Map.of("f", GcPolicy.KEEP_ALL, "g", GcPolicy.maxVersions(1)), List.of(),
        created.getRef().unsafeUpcast()));
    assertTrue(created.receiveMessage(WAIT).isSuccess());
    await(cache.refresh(master, kit.system(), WAIT), WAIT);
    tabletId = cache.get().tabletsOf("t").get(0).id();
    TabletServer.Options options = new TabletServer.Options("n1", 1 << 20, 1,
        new CommitLogOptions(1 << 20, Durability.OS_BUFFERED), TabletOptions.defaults().withMemtableBytes(2048));
    server = TabletServer.open(new FileStorage(dir.resolve("data")), options, MicrosClock.SYSTEM,
        table -> cache.get().table(table).schema());
  }

  @AfterEach
  void stop() throws IOException {
    if (kit != null) {
      kit.shutdownTestKit();
    }
    if (server != null) {
      server.close();
    }
  }

  private static byte[] b(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  private static String s(byte[] b) {
    return new String(b, StandardCharsets.UTF_8);
  }

  private ActorRef<TabletActor.Command> spawnTablet(String id, ActorRef<Master.Command> masterRef,
      TabletSettings settings) {
    return kit.spawn(TabletActor.create(id, new TabletNode("node1", server, cache, masterRef, settings, local)));
  }

  /**
   * A master that lets every tablet open as the test's directory has it, records every opening
   * a tablet reports (a tablet serves only once it has) and passes every message on to
   * {@code probe}.
   */
  private ActorRef<Master.Command> recordingOpens(TestProbe<Master.Command> probe) {
    return kit.spawn(Behaviors.receive(Master.Command.class).onAnyMessage(m -> {
      if (m instanceof Master.ReportOpened r) {
        r.replyTo().tell(StatusReply.ack());
      } else if (m instanceof Master.MayOpen o) {
        o.replyTo().tell(StatusReply.success(new Master.OpenPermit(cache.get().tablet(o.tabletId()),
            cache.get().placementOf(o.tabletId()).logs())));
      }
      probe.getRef().tell(m);
      return Behaviors.same();
    }).build());
  }

  private ActorRef<TabletActor.Command> spawnTablet() {
    return spawnTablet(tabletId, master, NEVER_SPLIT);
  }

  @SuppressWarnings("unchecked")
  private <R> R call(ActorRef<TabletActor.Command> tablet, Function<ActorRef<R>, TabletActor.Command> command) {
    TestProbe<R> probe = (TestProbe<R>) (TestProbe<?>) kit.createTestProbe(Object.class);
    tablet.tell(command.apply(probe.getRef()));
    return ActorTestConfig.roundTrip(kit, probe.receiveMessage(WAIT));
  }

  private static <T> T ok(StatusReply<T> reply) {
    assertTrue(reply.isSuccess(), () -> "expected success, got " + reply.getError());
    return reply.getValue();
  }

  private static ErrorCode codeOf(StatusReply<?> reply) {
    assertTrue(reply.isError(), "expected an error, got " + reply);
    return Refusal.in(reply.getError()).orElseThrow(() -> new AssertionError("not a refusal: " + reply.getError())).code();
  }

  private static Mutation set(String family, String qualifier, String value) {
    return new Mutation.SetCell(family, b(qualifier), 1000, b(value));
  }

  private StatusReply<Done> mutate(ActorRef<TabletActor.Command> tablet, String row, Mutation... ms) {
    return call(tablet, r -> new TabletActor.Mutate(RowMutation.of(b(row), ms), r));
  }

  /**
   * A change stream's read of a tablet (docs/change-streams.md): the answer travels between
   * nodes (it failed to serialize once, which only a multi-node reader met), and a reader
   * that has caught up is answered at the next write, not at the end of its wait.
   */
  @Test
  void changesAreReadThroughTheActorAndACaughtUpReaderIsAnsweredAtTheNextWrite() throws Exception {
    TestProbe<StatusReply<?>> changed = kit.createTestProbe();
    master.tell(new Master.ChangeOptions("t", new io.tabula.actors.master.TableOptions.Change(null, 86_400_000_000L),
        changed.getRef().unsafeUpcast()));
    assertTrue(changed.receiveMessage(WAIT).isSuccess());
    await(cache.refresh(master, kit.system(), WAIT), WAIT);
    ActorRef<TabletActor.Command> tablet = spawnTablet();
    ok(mutate(tablet, "r1", set("f", "q", "one")));
    TabletChangeReads.ChangesRead first = ok(call(tablet, r -> new TabletActor.ReadChanges(0, 1 << 20, 0, r)));
    assertEquals(1, first.changes().size());
    assertEquals("r1", s(first.changes().get(0).mutation().row()));
    long after = first.changes().get(0).lastSequence();
    TestProbe<StatusReply<TabletChangeReads.ChangesRead>> waiting = kit.createTestProbe();
    long asked = System.nanoTime();
    tablet.tell(new TabletActor.ReadChanges(after, 1 << 20, 15_000, waiting.getRef()));
    Thread.sleep(300);
    ok(mutate(tablet, "r2", set("f", "q", "two")));
    TabletChangeReads.ChangesRead next = ok(ActorTestConfig.roundTrip(kit, waiting.receiveMessage(WAIT)));
    assertTrue(System.nanoTime() - asked < java.util.concurrent.TimeUnit.SECONDS.toNanos(10),
        "answered at the write, not after the 15 s wait");
    assertEquals(List.of("r2"), next.changes().stream().map(c -> s(c.mutation().row())).toList());
  }

  private FilteredRow read(ActorRef<TabletActor.Command> tablet, String row, byte[] filter) {
    StatusReply<TabletActor.RowResult> reply = call(tablet, r -> new TabletActor.ReadRow(b(row), filter, r));
    return ok(reply).row();
  }

  private static byte[] valueRegex(String regex) {
    return RowFilter.newBuilder().setValueRegexFilter(ByteString.copyFromUtf8(regex)).build().toByteArray();
  }

  private List<String> scan(ActorRef<TabletActor.Command> tablet, String start, String end, boolean reversed) {
    StatusReply<SourceRef<FilteredRow>> reply = call(tablet, r -> new TabletActor.OpenScan(b(start), b(end),
        new byte[0], reversed, r));
    List<FilteredRow> rows = await(ok(reply).getSource().runWith(Sink.seq(), kit.system()), WAIT);
    return rows.stream().map(x -> s(x.key())).toList();
  }

  @Test
  void aMutationIsReadBack() {
    ActorRef<TabletActor.Command> tablet = spawnTablet();

    ok(mutate(tablet, "r1", set("f", "a", "one"), set("g", "b", "two")));

    FilteredRow row = read(tablet, "r1", new byte[0]);
    assertNotNull(row);
    assertEquals("r1", s(row.key()));
    assertEquals(List.of("one", "two"), row.cells().stream().map(c -> s(c.value())).toList());
    FilteredRow onlyG = read(tablet, "r1", RowFilter.newBuilder().setFamilyNameRegexFilter("g").build()
        .toByteArray());
    assertEquals(List.of("two"), onlyG.cells().stream().map(c -> s(c.value())).toList());
    assertNull(read(tablet, "r1", valueRegex("nothing")), "a row with no cell passing the filter is absent");
    assertNull(read(tablet, "r2", new byte[0]));
  }

  private static boolean oneFilePerGroup(Tablet t) {
    Map<String, List<String>> files = t.files();
    return !files.isEmpty() && files.values().stream().allMatch(l -> l.size() == 1);
  }

  @Test
  void aTabletThatFallsQuietFlushesItsMemtableAndCompactsToOneFileOfTheVersionsItsPolicyKeeps() throws IOException {
    server.close();
    server = TabletServer.open(new FileStorage(dir.resolve("data")), new TabletServer.Options("n1", 1 << 20, 1,
        new CommitLogOptions(1 << 20, Durability.OS_BUFFERED), TabletOptions.defaults().withMemtableBytes(64 << 20)),
        MicrosClock.SYSTEM, table -> cache.get().table(table).schema());
    Duration tick = Duration.ofMillis(100);
    ActorRef<TabletActor.Command> tablet = spawnTablet(tabletId, master, new TabletSettings(1L << 40, tick));
    int rows = 200;
    int passes = 3;
    byte[] value = new byte[4096];
    for (int pass = 0; pass < passes; pass++) {
      List<RowMutation> batch = new ArrayList<>();
      for (int r = 0; r < rows; r++) {
        value[0] = (byte) pass;
        batch.add(RowMutation.of(b("r" + r), new Mutation.SetCell("g", b("q"), 1000 + pass, value.clone())));
      }
      ok(call(tablet, (ActorRef<StatusReply<TabletActor.BatchOutcome>> reply) -> new TabletActor.MutateBatch(batch,
          reply)));
    }
    // Three versions of 200 rows of 4 KiB: about 2.4 MiB, far below the 64 MiB at which the memtable would freeze.
    // Waiting less than the long quiet after which any memtable is flushed: this is the flush at the spell's start.
    Tablet t = server.tablet(tabletId);
    long until = System.nanoTime() + tick.multipliedBy(QuietCompaction.LONG_QUIET_TICKS * 2 / 3).toNanos();
    while ((t.sizes().memtableBytes() > 0 || !oneFilePerGroup(t)) && System.nanoTime() < until) {
      Thread.onSpinWait();
    }
    assertEquals(0, t.sizes().memtableBytes(), "the quiet tablet's memtable was flushed");
    assertTrue(oneFilePerGroup(t), () -> "and its files compacted into one per group: " + t.files());
    long oneVersion = (long) rows * value.length;
    assertTrue(t.sizes().fileBytes() < oneVersion * 3 / 2,
        () -> "the file keeps one version of each row (max-versions 1), not " + passes + ": " + t.sizes());
    FilteredRow row = read(tablet, "r7", new byte[0]);
    assertEquals(passes - 1, row.cells().get(0).value()[0], "the newest version is read");
  }

  @Test
  void aServedTabletIsReadDirectlyUntilItsActorStops() {
    ActorRef<TabletActor.Command> tablet = spawnTablet();
    ok(mutate(tablet, "r1", set("f", "a", "one")));

    assertTrue(local.serves(tabletId), "a started tablet actor lists its tablet as served");
    TabletReads reads = local.reads(tabletId);
    assertEquals("one", s(reads.row(b("r1"), new byte[0]).cells().get(0).value()),
        "a direct read sees the acknowledged write");
    assertEquals(List.of("r1"), reads.rows(List.of(b("r0"), b("r1")), new byte[0]).stream().map(r -> s(r.key()))
        .toList());
    List<FilteredRow> scanned = await(reads.scan(new byte[0], new byte[0], new byte[0], false)
        .runWith(Sink.seq(), kit.system()), WAIT);
    assertEquals(List.of("r1"), scanned.stream().map(r -> s(r.key())).toList());
    Throwable badFilter = assertThrows(RuntimeException.class, () -> reads.row(b("r1"), new byte[] {(byte) 0xff}));
    assertEquals(ErrorCode.INVALID_ARGUMENT, TabletReads.failure(badFilter).code());

    kit.stop(tablet);
    long until = System.nanoTime() + WAIT.toNanos();
    while (local.serves(tabletId) && System.nanoTime() < until) {
      Thread.onSpinWait();
    }
    assertFalse(local.serves(tabletId), "a stopped actor's tablet is no longer listed");
    assertNull(local.reads(tabletId));
  }

  @Test
  void refusesAnUnknownFamilyAsNotFoundAndABadFilterAsInvalid() {
    ActorRef<TabletActor.Command> tablet = spawnTablet();

    assertEquals(ErrorCode.NOT_FOUND, codeOf(mutate(tablet, "r1", set("nope", "a", "x"))));
    assertEquals(ErrorCode.INVALID_ARGUMENT, codeOf(call(tablet,
        (ActorRef<StatusReply<TabletActor.RowResult>> r) -> new TabletActor.ReadRow(b("r1"), new byte[] {(byte) 0xff},
            r))));
    assertNull(read(tablet, "r1", new byte[0]), "the refused mutation wrote nothing");
  }

  @Test
  void aBatchAppliesEachRowOnItsOwnAndReadRowsAnswersInTheOrderAsked() {
    ActorRef<TabletActor.Command> tablet = spawnTablet();

    StatusReply<TabletActor.BatchOutcome> reply = call(tablet, r -> new TabletActor.MutateBatch(new ArrayList<>(List.of(
        RowMutation.of(b("a"), set("f", "q", "1")),
        RowMutation.of(b("b"), set("nope", "q", "2")),
        RowMutation.of(b("c"), set("f", "q", "3")))), r));

    List<Refusal> refusals = ok(reply).refusals();
    assertEquals(3, refusals.size());
    assertNull(refusals.get(0));
    assertEquals(ErrorCode.NOT_FOUND, refusals.get(1).code(), refusals.get(1)::toString);
    assertNull(refusals.get(2));
    StatusReply<TabletActor.RowsResult> rows = call(tablet, r -> new TabletActor.ReadRows(
        new ArrayList<>(List.of(b("c"), b("b"), b("a"))), new byte[0], r));
    assertEquals(List.of("c", "a"), ok(rows).rows().stream().map(x -> s(x.key())).toList(),
        "rows in the order asked, the refused row absent");
    StatusReply<TabletActor.BatchOutcome> empty = call(tablet, r -> new TabletActor.MutateBatch(new ArrayList<>(), r));
    assertEquals(List.of(), ok(empty).refusals());
  }

  @Test
  void anotherNodesWriteAndReadOfSeveralTabletsGetOneAnswerAndAnUnservedTabletIsRefusedAsMoved() {
    ActorRef<TabletActor.Command> tablet = spawnTablet();
    TestProbe<TabletActor.Command> nowhere = kit.createTestProbe();
    ActorRef<NodeRequests.Command> node = kit.spawn(NodeRequests.create(local,
        id -> id.equals(tabletId) ? tablet : nowhere.getRef(), Duration.ofMillis(300), server.env().storage()));

    TestProbe<NodeRequests.WriteAnswer> written = kit.createTestProbe();
    node.tell(new NodeRequests.Write(new ArrayList<>(List.of(
        new NodeRequests.Batch(tabletId, new ArrayList<>(List.of(RowMutation.of(b("a"), set("f", "q", "1")),
            RowMutation.of(b("b"), set("nope", "q", "2"))))),
        new NodeRequests.Batch("gone", new ArrayList<>(List.of(RowMutation.of(b("c"), set("f", "q", "3"))))))),
        written.getRef()));
    NodeRequests.WriteAnswer w = ActorTestConfig.roundTrip(kit, written.receiveMessage(WAIT));
    assertNull(w.refusals().get(0));
    assertNull(w.outcomes().get(0).refusals().get(0), "the valid row is applied");
    assertEquals(ErrorCode.NOT_FOUND, w.outcomes().get(0).refusals().get(1).code(), "a bad row is refused alone");
    assertNull(w.outcomes().get(1), "a batch whose tablet does not answer has no outcome");
    assertNotNull(w.refusals().get(1), "but a refusal: the answer still comes, with the others' outcomes");

    TestProbe<NodeRequests.ReadAnswer> read = kit.createTestProbe();
    node.tell(new NodeRequests.Read(new ArrayList<>(List.of(
        new NodeRequests.Part(tabletId, new ArrayList<>(List.of(b("b"), b("a")))),
        new NodeRequests.Part("gone", new ArrayList<>(List.of(b("c")))))), new byte[0], read.getRef()));
    NodeRequests.ReadAnswer r = ActorTestConfig.roundTrip(kit, read.receiveMessage(WAIT));
    assertEquals(List.of("a"), r.rows().get(0).stream().map(x -> s(x.key())).toList());
    assertNull(r.refusals().get(0));
    assertEquals(List.of(), r.rows().get(1));
    assertEquals(ErrorCode.MOVED, r.refusals().get(1).code(), "a tablet not served here is refused as moved");
  }

  @Test
  void anotherNodesReadIsAnsweredInPiecesThatFitAFrameAndSaysWhereToGoOn() {
    ActorRef<TabletActor.Command> tablet = spawnTablet();
    String big = "v".repeat(200 * 1024);
    for (String row : List.of("a", "b", "c", "d")) {
      ok(mutate(tablet, row, set("f", "q", big)));
    }
    ActorRef<NodeRequests.Command> node = kit.spawn(NodeRequests.create(local, id -> tablet, WAIT, server.env().storage()));

    TestProbe<NodeRequests.ReadAnswer> read = kit.createTestProbe();
    node.tell(new NodeRequests.Read(new ArrayList<>(List.of(
        new NodeRequests.Part(tabletId, new ArrayList<>(List.of(b("a"), b("x"), b("b"), b("c")))),
        new NodeRequests.Part(tabletId, new ArrayList<>(List.of(b("d")))))), new byte[0], read.getRef()));
    NodeRequests.ReadAnswer first = ActorTestConfig.roundTrip(kit, read.receiveMessage(WAIT));

    assertEquals(0, first.complete(), "the first part did not fit whole");
    assertEquals(3, first.nextKey(), "it goes on at key c");
    assertEquals(List.of("a", "b"), first.rows().get(0).stream().map(x -> s(x.key())).toList());
    assertEquals(List.of(), first.rows().get(1), "the second part is left for the next ask");
    assertNull(first.refusals().get(1));

    node.tell(new NodeRequests.Read(new ArrayList<>(List.of(
        new NodeRequests.Part(tabletId, new ArrayList<>(List.of(b("c")))),
        new NodeRequests.Part(tabletId, new ArrayList<>(List.of(b("d")))))), new byte[0], read.getRef()));
    NodeRequests.ReadAnswer rest = ActorTestConfig.roundTrip(kit, read.receiveMessage(WAIT));
    assertEquals(2, rest.complete());
    assertEquals(List.of("c"), rest.rows().get(0).stream().map(x -> s(x.key())).toList());
    assertEquals(List.of("d"), rest.rows().get(1).stream().map(x -> s(x.key())).toList());
  }

  @Test
  void aCheckAndMutateThatAppliesNothingIsNotAnsweredOnceTheLogIsFenced() throws Exception {
    ActorRef<TabletActor.Command> tablet = spawnTablet();
    StatusReply<Boolean> before = call(tablet, r -> new TabletActor.CheckAndMutate(b("r"), valueRegex("no"),
        List.of(set("f", "x", "on-match")), List.of(), r));
    assertEquals(false, ok(before));
    // Another node recovers this node's tablets now (docs/fencing.md).
    new FileStorage(dir.resolve("data")).fence("logs/n1");
    StatusReply<Boolean> after = call(tablet, r -> new TabletActor.CheckAndMutate(b("r"), valueRegex("no"),
        List.of(set("f", "x", "on-match")), List.of(), r));
    assertTrue(after.isError(), "a fenced node answered a check-and-mutate from its stale copy: " + after);
  }

  @Test
  void checkAndMutateAppliesTheBranchTheRowChooses() {
    ActorRef<TabletActor.Command> tablet = spawnTablet();

    StatusReply<Boolean> absent = call(tablet, r -> new TabletActor.CheckAndMutate(b("r"), new byte[0],
        List.of(set("f", "a", "matched")), List.of(set("f", "a", "yes")), r));
    assertEquals(false, ok(absent), "an empty predicate matches only a row with cells");
    assertEquals("yes", s(read(tablet, "r", new byte[0]).cells().get(0).value()));

    StatusReply<Boolean> present = call(tablet, r -> new TabletActor.CheckAndMutate(b("r"), valueRegex("yes"),
        List.of(set("g", "m", "on-match")), List.of(set("g", "m", "on-no-match")), r));
    assertEquals(true, ok(present));
    StatusReply<Boolean> mismatch = call(tablet, r -> new TabletActor.CheckAndMutate(b("r"), valueRegex("no"),
        List.of(set("f", "x", "on-match")), List.of(), r));
    assertEquals(false, ok(mismatch), "no branch to apply still answers");

    FilteredRow row = read(tablet, "r", new byte[0]);
    assertEquals(List.of("f:a=yes", "g:m=on-match"), row.cells().stream()
        .map(c -> c.family() + ":" + s(c.qualifier()) + "=" + s(c.value())).toList());
  }

  @Test
  void concurrentIncrementsOfOneRowAllCount() {
    ActorRef<TabletActor.Command> tablet = spawnTablet();
    TestProbe<StatusReply<Row>> increments = kit.createTestProbe();
    TestProbe<StatusReply<Done>> writes = kit.createTestProbe();
    int n = 200;

    for (int i = 0; i < n; i++) {
      tablet.tell(new TabletActor.ReadModifyWrite(b("counter"), List.of(new ReadModifyWriteRule.Increment("f",
          b("n"), 1), new ReadModifyWriteRule.Append("g", b("log"), b("."))), increments.getRef()));
      // Plain writes to the same row in between keep the row busy, so increments queue behind them.
      tablet.tell(new TabletActor.Mutate(RowMutation.of(b("counter"), set("f", "other" + (i % 3), "x")),
          writes.getRef()));
    }

    Set<Long> seen = new HashSet<>();
    for (int i = 0; i < n; i++) {
      Row row = ok(ActorTestConfig.roundTrip(kit, increments.receiveMessage(WAIT)));
      assertEquals(2, row.cells().size());
      seen.add(ByteBuffer.wrap(row.cells().get(0).value()).getLong());
      ok(writes.receiveMessage(WAIT));
    }
    assertEquals(LongRange.of(1, n), seen, "each increment saw the one before it");
    FilteredRow row = read(tablet, "counter", RowFilter.newBuilder().setColumnQualifierRegexFilter(
        ByteString.copyFromUtf8("n|log")).setCellsPerColumnLimitFilter(1).build().toByteArray());
    assertNotNull(row);
    assertEquals(n, ByteBuffer.wrap(row.cells().stream().filter(c -> s(c.qualifier()).equals("n")).findFirst()
        .orElseThrow().value()).getLong());
    assertEquals(".".repeat(n), s(row.cells().stream().filter(c -> s(c.qualifier()).equals("log")).findFirst()
        .orElseThrow().value()));
  }

  /** The set {@code from..to}. */
  private static final class LongRange {
    static Set<Long> of(long from, long to) {
      Set<Long> out = new HashSet<>();
      for (long i = from; i <= to; i++) {
        out.add(i);
      }
      return out;
    }
  }

  @Test
  void anIncrementOfANonCounterFailsThePrecondition() {
    ActorRef<TabletActor.Command> tablet = spawnTablet();
    ok(mutate(tablet, "r", set("f", "n", "abc")));

    StatusReply<Row> reply = call(tablet, r -> new TabletActor.ReadModifyWrite(b("r"), List.of(
        new ReadModifyWriteRule.Increment("f", b("n"), 1)), r));

    assertEquals(ErrorCode.FAILED_PRECONDITION, codeOf(reply));
  }

  @Test
  void aScanStreamsRowsInOrderThroughASourceRef() {
    ActorRef<TabletActor.Command> tablet = spawnTablet();
    List<String> keys = IntStream.range(0, 60).mapToObj(i -> String.format("row%03d", i)).toList();
    List<String> shuffled = new ArrayList<>(keys);
    java.util.Collections.shuffle(shuffled, new java.util.Random(7));
    for (String k : shuffled) {
      ok(mutate(tablet, k, set("f", "q", "value of " + k)));
    }

    assertEquals(keys, scan(tablet, "", "", false));
    assertEquals(keys.subList(10, 20), scan(tablet, "row010", "row020", false));
    List<String> reversed = new ArrayList<>(keys.subList(10, 20));
    java.util.Collections.reverse(reversed);
    assertEquals(reversed, scan(tablet, "row010", "row020", true));
  }

  @Test
  void dropRowsDeletesThePrefix() {
    ActorRef<TabletActor.Command> tablet = spawnTablet();
    for (String k : List.of("a1", "a2", "b1", "b2")) {
      ok(mutate(tablet, k, set("f", "q", "v")));
    }

    ok(call(tablet, (ActorRef<StatusReply<Done>> r) -> new TabletActor.DropRows(b("a"), r)));

    assertEquals(List.of("b1", "b2"), scan(tablet, "", "", false));
  }

  @Test
  void sampleRowsCutTheTabletInRowOrderWithGrowingOffsets() {
    ActorRef<TabletActor.Command> tablet = spawnTablet();
    List<String> keys = IntStream.range(0, 200).mapToObj(i -> String.format("row%03d", i)).toList();
    for (String k : keys) {
      ok(mutate(tablet, k, set("f", "q", "v".repeat(100))));
    }
    // 2 KiB memtables: most of the 20 KiB written is in SSTables now, which is what samples count.
    List<Tablet.RowSample> samples = ok(call(tablet, TabletActor.SampleRows::new));
    assertTrue(samples.size() >= 2, "samples: " + samples.size());
    for (int i = 0; i < samples.size(); i++) {
      Tablet.RowSample x = samples.get(i);
      // A sample is the last row of an SSTable block: a row that was written, never one made up.
      assertTrue(keys.contains(s(x.row())), "a sample outside the data: " + s(x.row()));
      if (i > 0) {
        Tablet.RowSample prev = samples.get(i - 1);
        assertTrue(s(prev.row()).compareTo(s(x.row())) < 0, "samples in row order");
        assertTrue(prev.offsetBytes() <= x.offsetBytes(), "offsets never shrink");
      }
    }
    long last = samples.get(samples.size() - 1).offsetBytes();
    assertTrue(last > 5_000 && last < 100_000, "the bytes up to the last sample are about the data written: " + last);
  }

  @Test
  void aRowAtomicRequestArrivingAfterADropSeesTheRowDropped() {
    ActorRef<TabletActor.Command> tablet = spawnTablet();
    for (int i = 0; i < 50; i++) {
      ok(mutate(tablet, "r" + i, set("f", "y", "present")));
    }
    TestProbe<StatusReply<Done>> dropped = kit.createTestProbe();
    TestProbe<StatusReply<Boolean>> checked = kit.createTestProbe();
    tablet.tell(new TabletActor.DropRows(b("r"), dropped.getRef()));
    // Sent right after the drop: it must not read the row before the drop and write after it.
    tablet.tell(new TabletActor.CheckAndMutate(b("r49"), new byte[0], List.of(set("f", "x", "matched")),
        List.of(set("f", "z", "not matched")), checked.getRef()));

    ok(ActorTestConfig.roundTrip(kit, dropped.receiveMessage(WAIT)));
    assertEquals(false, ok(ActorTestConfig.roundTrip(kit, checked.receiveMessage(WAIT))),
        "the check ran after the drop: the row was empty");
    assertEquals(List.of("f:z=not matched"), read(tablet, "r49", new byte[0]).cells().stream()
        .map(c -> c.family() + ":" + s(c.qualifier()) + "=" + s(c.value())).toList());
    assertEquals(List.of("r49"), scan(tablet, "", "", false));
  }

  @Test
  void aReadModifyWriteOverTheCellLimitsIsRefusedNotLeftUnanswered() {
    ActorRef<TabletActor.Command> tablet = spawnTablet();
    StatusReply<Row> longQualifier = call(tablet, r -> new TabletActor.ReadModifyWrite(b("r"), List.of(
        new ReadModifyWriteRule.Append("f", new byte[16 * 1024 + 1], b("x"))), r));
    assertEquals(ErrorCode.INVALID_ARGUMENT, codeOf(longQualifier));
    StatusReply<Row> longFamily = call(tablet, r -> new TabletActor.ReadModifyWrite(b("r"), List.of(
        new ReadModifyWriteRule.Increment("f".repeat(65), b("q"), 1)), r));
    assertEquals(ErrorCode.INVALID_ARGUMENT, codeOf(longFamily));
    StatusReply<Boolean> badBranch = call(tablet, r -> new TabletActor.CheckAndMutate(b("r"), new byte[0],
        List.of(), List.of(new Mutation.SetCell("f", new byte[16 * 1024 + 1], 1000, b("v"))), r));
    assertEquals(ErrorCode.INVALID_ARGUMENT, codeOf(badBranch));
    ok(mutate(tablet, "r", set("f", "q", "the row is free again")));
  }

  @Test
  void aTabletUnknownToTheDirectoryAnswersMoved() {
    ActorRef<TabletActor.Command> tablet = spawnTablet("t-999", master, NEVER_SPLIT);

    assertEquals(ErrorCode.MOVED, codeOf(mutate(tablet, "r", set("f", "q", "v"))));
  }

  /**
   * Writes rows until the tablet, splitting, refuses one as MOVED; returns the rows it
   * acknowledged. The refused row must not have been written.
   */
  private List<String> writeUntilSplitting(ActorRef<TabletActor.Command> tablet) {
    List<String> acked = new ArrayList<>();
    for (int i = 0; i < 5000; i++) {
      String k = String.format("row%04d", i);
      StatusReply<Done> reply = mutate(tablet, k, set("f", "q", "x".repeat(64)));
      if (reply.isError()) {
        assertEquals(ErrorCode.MOVED, codeOf(reply));
        return acked;
      }
      acked.add(k);
    }
    throw new AssertionError("the tablet did not split after " + acked.size() + " rows");
  }

  @Test
  void aTabletPastItsSplitSizeSplitsAndRefusesOnceTheMasterRecordsIt() throws IOException {
    TestProbe<Master.Command> masterProbe = kit.createTestProbe();
    ActorRef<TabletActor.Command> tablet = spawnTablet(tabletId, recordingOpens(masterProbe),
        new TabletSettings(4096, Duration.ofMillis(100)));
    List<String> keys = writeUntilSplitting(tablet);

    List<Master.Command> told = masterProbe.fishForMessage(WAIT, m -> m instanceof Master.RecordSplit
        ? FishingOutcomes.complete() : FishingOutcomes.continueAndIgnore());
    Master.RecordSplit split = (Master.RecordSplit) told.get(told.size() - 1);
    assertFalse(local.serves(tabletId), "a split tablet is no longer read directly");
    assertEquals("t", split.table());
    assertEquals(tabletId, split.parentId());
    assertEquals(ErrorCode.MOVED, codeOf(mutate(tablet, "row0000", set("f", "q", "late"))),
        "a split tablet refuses requests while the master records the split");

    // The real master records it too, so the children are in the directory.
    TestProbe<StatusReply<Done>> recorded = kit.createTestProbe();
    master.tell(new Master.RecordSplit(split.table(), split.parentId(), split.splitRow(), split.leftId(),
        split.rightId(), recorded.getRef()));
    ok(recorded.receiveMessage(WAIT));
    split.replyTo().tell(StatusReply.ack());
    // Once recorded, the old tablet's entity keeps refusing (it does not stop: a sharded entity
    // that stops on its own would drop messages already on their way to it).
    long until = System.nanoTime() + WAIT.toNanos();
    ErrorCode after = codeOf(mutate(tablet, "row0000", set("f", "q", "later")));
    while (after != ErrorCode.MOVED && System.nanoTime() < until) {
      after = codeOf(mutate(tablet, "row0000", set("f", "q", "later")));
    }
    assertEquals(ErrorCode.MOVED, after, "the split tablet refuses after the master recorded the split");

    await(cache.refresh(master, kit.system(), WAIT), WAIT);
    assertNotNull(server.tablet(split.leftId()));
    assertNotNull(server.tablet(split.rightId()));
    assertNull(server.tablet(tabletId));
    TabletInfo left = cache.get().tablet(split.leftId());
    TabletInfo right = cache.get().tablet(split.rightId());
    assertArrayEquals(split.splitRow(), left.endRow());
    assertArrayEquals(split.splitRow(), right.startRow());
    ActorRef<TabletActor.Command> leftActor = spawnTablet(split.leftId(), master, NEVER_SPLIT);
    ActorRef<TabletActor.Command> rightActor = spawnTablet(split.rightId(), master, NEVER_SPLIT);
    List<String> leftRows = scan(leftActor, "", "", false);
    List<String> rightRows = scan(rightActor, "", "", false);
    // Served now (a child opens its tablet before it answers).
    Throwable outside = assertThrows(RuntimeException.class,
        () -> local.reads(split.leftId()).row(b(keys.get(keys.size() - 1)), new byte[0]));
    assertEquals(ErrorCode.MOVED, TabletReads.failure(outside).code(),
        "a direct read of a row outside the tablet is refused as moved");
    assertFalse(leftRows.isEmpty());
    assertFalse(rightRows.isEmpty());
    List<String> all = new ArrayList<>(leftRows);
    all.addAll(rightRows);
    assertEquals(keys, all, "the children hold every row once, split at " + s(split.splitRow()));
    assertEquals("x".repeat(64), s(read(rightActor, keys.get(keys.size() - 1), new byte[0]).cells().get(0).value()));
    ok(mutate(leftActor, "row0000", set("f", "q", "after")));
    assertEquals("after", s(read(leftActor, "row0000", valueRegex("after")).cells().get(0).value()));
  }

  @Test
  void aSplitTheMasterMissedIsReportedAgainWhenTheParentIsStartedAgain() {
    TestProbe<Master.Command> lostMaster = kit.createTestProbe();
    ActorRef<TabletActor.Command> tablet = spawnTablet(tabletId, recordingOpens(lostMaster),
        new TabletSettings(4096, Duration.ofMillis(100)));
    writeUntilSplitting(tablet);
    List<Master.Command> told = lostMaster.fishForMessage(WAIT, m -> m instanceof Master.RecordSplit
        ? FishingOutcomes.complete() : FishingOutcomes.continueAndIgnore());
    Master.RecordSplit split = (Master.RecordSplit) told.get(told.size() - 1);
    kit.stop(tablet, WAIT);
    assertNotNull(cache.get().tablet(tabletId), "the master never heard of the split");

    ActorRef<TabletActor.Command> again = spawnTablet(tabletId, master, NEVER_SPLIT);

    assertEquals(ErrorCode.MOVED, codeOf(mutate(again, "row0000", set("f", "q", "v"))));
    lostMaster.awaitAssert(WAIT, () -> {
      await(cache.refresh(master, kit.system(), WAIT), WAIT);
      assertNotNull(cache.get().tablet(split.leftId()), "the restarted parent told the master of its split");
      return null;
    });
    assertNull(cache.get().tablet(tabletId));
    assertNotNull(cache.get().tablet(split.rightId()));
  }

  /**
   * A real file system whose SSTable creations wait at a gate: flushes stall, the way a
   * slow or busy disk stalls them, while the commit log keeps working.
   */
  private static final class GatedStorage extends ForwardingStorage {
    private final CountDownLatch gate = new CountDownLatch(1);

    GatedStorage(Storage inner) {
      super(inner);
    }

    @Override
    public WritableFile create(String path) throws IOException {
      if (path.endsWith(".sst")) {
        try {
          gate.await();
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw new IOException("interrupted at the gate", e);
        }
      }
      return delegate.create(path);
    }
  }

  /** A tablet on gated storage whose flush backlog is full: its next write is held. */
  private GatedStorage storageWithFullBacklog() throws IOException {
    server.close();
    GatedStorage storage = new GatedStorage(new FileStorage(dir.resolve("gated")));
    server = TabletServer.open(storage, new TabletServer.Options("n1", 1 << 20, 1,
        new CommitLogOptions(1 << 20, Durability.OS_BUFFERED), new TabletOptions(2048, 8, 1)), MicrosClock.SYSTEM,
        table -> cache.get().table(table).schema());
    return storage;
  }

  /** Fills the tablet's flush backlog, then sends a write "late"=v, which is held: its reply does not come. */
  private TestProbe<StatusReply<Done>> holdAWrite(ActorRef<TabletActor.Command> tablet) {
    fillBacklog(tablet);
    TestProbe<StatusReply<Done>> held = kit.createTestProbe();
    tablet.tell(new TabletActor.Mutate(RowMutation.of(b("late"), set("f", "q", "v")), held.getRef()));
    held.expectNoMessage(Duration.ofMillis(300));
    return held;
  }

  private void fillBacklog(ActorRef<TabletActor.Command> tablet) {
    ok(mutate(tablet, "a", set("f", "q", "first")));
    // Fill memtables until the one frozen memtable the tablet may hold cannot be flushed.
    String big = "x".repeat(600);
    int n = 0;
    while (!server.tablet(tabletId).flushBacklogFull()) {
      ok(mutate(tablet, "fill" + n++, set("f", "q", big)));
      assertTrue(n < 1000, "the flush backlog never filled");
    }
  }

  @Test
  void writesWaitingForAFlushDoNotHoldUpReads() throws IOException {
    GatedStorage storage = storageWithFullBacklog();
    ActorRef<TabletActor.Command> tablet = spawnTablet();
    TestProbe<StatusReply<Done>> held = holdAWrite(tablet);
    assertEquals("first", s(read(tablet, "a", new byte[0]).cells().get(0).value()),
        "a read is answered while a write waits for the flush");
    storage.gate.countDown();
    ok(held.receiveMessage(WAIT));
    assertEquals("v", s(read(tablet, "late", new byte[0]).cells().get(0).value()));
  }

  /**
   * A close (here for a merge) that begins while an idempotent write looks for its token waits
   * for that write, which is applied and answered, and then ends: the token's answer used to be
   * refused in the closing tablet without releasing its row, so the close waited forever.
   */
  @Test
  void aCloseWaitsForAnIdempotentWriteLookingForItsTokenAndEnds() {
    ActorRef<TabletActor.Command> tablet = spawnTablet();
    ok(mutate(tablet, "r0", set("f", "a", "first"))); // the tablet is open and serving
    TestProbe<StatusReply<Done>> written = kit.createTestProbe();
    TestProbe<StatusReply<Done>> closed = kit.createTestProbe();
    // One after the other in the mailbox: the close comes in while the token is looked for.
    tablet.tell(new TabletActor.Mutate(new RowMutation(b("r1"), List.of(set("f", "a", "once"),
        new Mutation.Token(b("token-0001"), Mutation.SERVER_TIME))), written.ref()));
    tablet.tell(new TabletActor.CloseForMerge(closed.ref()));
    ok(written.receiveMessage(WAIT));
    ok(closed.receiveMessage(WAIT));
    kit.createTestProbe().expectTerminated(tablet, WAIT);
  }

  /**
   * A hand-over waits for the writes held for the flush backlog, and goes on trying them: it
   * used to cancel their retry with its other timers, so it waited until sharding gave up.
   */
  @Test
  void aHandOffGoesOnTryingHeldWritesAndFinishes() throws IOException {
    GatedStorage storage = storageWithFullBacklog();
    ActorRef<TabletActor.Command> tablet = spawnTablet();
    TestProbe<StatusReply<Done>> held = holdAWrite(tablet);
    tablet.tell(TabletActor.HandOff.INSTANCE);
    held.expectNoMessage(Duration.ofMillis(300));
    storage.gate.countDown();
    ok(held.receiveMessage(WAIT));
    kit.createTestProbe().expectTerminated(tablet, WAIT);
  }
}
