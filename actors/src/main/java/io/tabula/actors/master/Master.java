package io.tabula.actors.master;

import io.tabula.actors.tablet.TabletActor;
import io.tabula.persistence.schema.Aggregator;
import io.tabula.persistence.schema.GcPolicy;
import io.tabula.persistence.schema.LocalityGroup;
import io.tabula.persistence.sstable.Compression;
import io.tabula.protocol.errors.ErrorCode;
import io.tabula.protocol.errors.Refusal;
import io.tabula.protocol.kryo.KryoSerializable;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.LongSupplier;
import org.apache.pekko.Done;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.PostStop;
import org.apache.pekko.actor.typed.RecipientRef;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.actor.typed.pubsub.Topic;
import org.apache.pekko.pattern.StatusReply;
import org.apache.pekko.persistence.typed.PersistenceId;
import org.apache.pekko.persistence.typed.RecoveryCompleted;
import org.apache.pekko.persistence.typed.SnapshotAdapter;
import org.apache.pekko.persistence.typed.javadsl.CommandHandler;
import org.apache.pekko.persistence.typed.javadsl.Effect;
import org.apache.pekko.persistence.typed.javadsl.EventHandler;
import org.apache.pekko.persistence.typed.javadsl.EventSourcedBehavior;
import org.apache.pekko.persistence.typed.javadsl.RetentionCriteria;
import org.apache.pekko.persistence.typed.javadsl.SignalHandler;

/**
 * The master (paper §5.2): the one place that decides which tables, families and tablets
 * exist. Its state is a {@link Directory}, event-sourced with Pekko Persistence, so it
 * survives restarts and master moves; every change is published on the directory
 * {@link Topic} for the nodes' caches. Clients never wait on it for reads and writes.
 *
 * <p>Run as a cluster singleton that starts only while it holds the master lease, so there
 * is at most one writer of its journal.
 */
public final class Master extends EventSourcedBehavior<Master.Command, Master.Event, Directory> {
  /** The topic name the master publishes its directory's changes on ({@link DirectoryFeed.Change}). */
  public static final String TOPIC = "tabula-directory-changes";
  public static final PersistenceId PERSISTENCE_ID = PersistenceId.ofUniqueId("tabula-master");

  public sealed interface Command extends KryoSerializable {}

  /**
   * Creates a table with its families and one tablet per initial split range; {@code
   * aggregates} names the aggregate families' aggregators.
   */
  public record CreateTable(String name, Map<String, GcPolicy> families, Map<String, Aggregator> aggregates,
      List<byte[]> splits, ActorRef<StatusReply<TableInfo>> replyTo) implements Command {
    /** A table with no aggregate family. */
    public CreateTable(String name, Map<String, GcPolicy> families, List<byte[]> splits,
        ActorRef<StatusReply<TableInfo>> replyTo) {
      this(name, families, Map.of(), splits, replyTo);
    }
  }

  /** A piece of upload {@code upload}'s initial splits, for a {@link CreateStagedTable} to come ({@link StagedSplits}). */
  public record StageSplits(String upload, List<byte[]> splits, ActorRef<StatusReply<Done>> replyTo)
      implements Command {}

  /** {@link CreateTable} with the {@code count} splits staged under {@code upload}. */
  public record CreateStagedTable(String name, Map<String, GcPolicy> families, Map<String, Aggregator> aggregates,
      String upload, int count, ActorRef<StatusReply<TableInfo>> replyTo) implements Command {}

  public record DeleteTable(String name, ActorRef<StatusReply<Done>> replyTo) implements Command {}

  /**
   * One change of a table's families: create (must not exist), update (must exist) or drop.
   * {@code aggregator} makes a created family an aggregate family; an update that names one
   * must name the family's own (a family's value type never changes); null: none, or not given.
   */
  public record FamilyChange(String family, Kind kind, GcPolicy gcPolicy, Aggregator aggregator)
      implements KryoSerializable {
    public enum Kind { CREATE, UPDATE, DROP }

    /** A change that names no aggregator. */
    public FamilyChange(String family, Kind kind, GcPolicy gcPolicy) {
      this(family, kind, gcPolicy, null);
    }
  }

  /** Applies every change or none. */
  public record ModifyFamilies(String table, List<FamilyChange> changes, ActorRef<StatusReply<TableInfo>> replyTo)
      implements Command {}

  /**
   * Creates or changes locality group {@code group} of a table (null settings keep the
   * group's) and creates {@code families} in it (see {@link TableChanges#setLocalityGroup}).
   */
  public record SetLocalityGroup(String table, String group, Boolean inMemory, Compression compression,
      List<String> families, ActorRef<StatusReply<TableInfo>> replyTo) implements Command {}

  /** A change of table {@code table}'s IAM policy or authorized views; answers the table as changed. */
  public record ChangeAccess(String table, TableAccess.Change change, ActorRef<StatusReply<TableInfo>> replyTo)
      implements Command {}

  /**
   * A table made from a backup (docs/backups.md): {@code table} as the backup's schema gives it,
   * with {@code tablets} (ids made away from the master, manifests already written, covering
   * every row once) naming the backup's files; answers the table.
   */
  public record CreateRestoredTable(TableInfo table, List<TabletInfo> tablets,
      ActorRef<StatusReply<TableInfo>> replyTo) implements Command {}

  /** A change of table {@code table}'s settings ({@code UpdateTable}); answers the table as changed. */
  public record ChangeOptions(String table, TableOptions.Change change, ActorRef<StatusReply<TableInfo>> replyTo)
      implements Command {}

  /** The whole directory: for a caller in the master's own JVM (tests, the master's node); nodes ask {@link GetChanges}. */
  public record GetDirectory(ActorRef<Directory> replyTo) implements Command {}

  /** What takes node {@code node}'s copy, at version {@code since} (-1: none), to its share ("": the whole). */
  public record GetChanges(long since, String node, ActorRef<DirectoryFeed.Changes> replyTo) implements Command {}

  /** Chunk {@code index} of the blob {@code key} a {@link DirectoryFeed.Changes} named. */
  public record GetChunk(String key, int index, ActorRef<DirectoryFeed.Chunk> replyTo) implements Command {}

  /** A node's lookup of the tablets of {@code table} at {@code row} and after (or before) it ({@link TabletLookup}). */
  public record Locate(String table, byte[] row, boolean before, int count,
      ActorRef<TabletLookup.Located> replyTo) implements Command {}

  /**
   * Which of commit-log folders {@code folders} a tablet's placement names (its next opening
   * replays them): a node asks before it empties its earlier lives' folders ({@code LogSweeper}).
   */
  public record NamedLogs(List<String> folders, ActorRef<Names> replyTo) implements Command {}

  /** The answer to {@link NamedLogs} and {@link NeverWritten}: those of the names asked about that are so. */
  public record Names(List<String> names) implements KryoSerializable {}

  /**
   * Which of tablets {@code ids} the directory has with no file and no log named (so never
   * written, if also without a manifest: {@code UnopenedTablets}). At most {@link TabletLookup#MOST_TABLETS}.
   */
  public record NeverWritten(List<String> ids, ActorRef<Names> replyTo) implements Command {}

  /** A tablet has split (its manifest already says so): record the two children in its place. */
  public record RecordSplit(String table, String parentId, byte[] splitRow, String leftId, String rightId,
      ActorRef<StatusReply<Done>> replyTo) implements Command {}

  /** A tablet's SSTables and redo point after a flush or compaction. */
  public record RecordFiles(String table, String tabletId, Map<String, List<String>> files, long redoPoint)
      implements Command {}

  /** Stops the master (the singleton's hand-over message). */
  public enum Stop implements Command { INSTANCE }

  /**
   * Where should tablet {@code tabletId} be served? Answered with its owner if that node is
   * Up, else with a node the master places it on now (recorded first). Asked by the shard
   * allocation when a tablet's owner is gone or it has none.
   */
  public record Place(String tabletId, ActorRef<StatusReply<String>> replyTo) implements Command {}

  /**
   * May node {@code node}, writing commit log {@code log}, open tablet {@code tabletId} now?
   * Answered, from the master's own directory (never a node's copy), with the tablet and the
   * logs its opener must replay, once each of them other than {@code log} is fenced or was
   * released by its live writer ({@link OpenChecks}); refused UNAVAILABLE while that is under
   * way (ask again), FAILED_PRECONDITION while the tablet is being merged or is placed on
   * another node, NOT_FOUND if it does not exist.
   */
  public record MayOpen(String tabletId, String node, String log, ActorRef<StatusReply<OpenPermit>> replyTo)
      implements Command {}

  /** A tablet may open: its range and files as the directory has them, and the logs to replay. */
  public record OpenPermit(TabletInfo tablet, List<String> logs) implements KryoSerializable {}

  /**
   * Node {@code node} has opened tablet {@code tabletId} and writes it to its log
   * {@code log}; it replayed and flushed what the logs {@code recovered} held of it. Answered
   * once recorded: the tablet takes writes only after that, so a log that holds its writes
   * is always one the directory names. Refused (FAILED_PRECONDITION) if a log the placement
   * names, other than {@code log}, is not among {@code recovered}: the opener then closes the
   * tablet without serving it. {@code opening} numbers this opening among the node's
   * ({@code LocalTablets#nextOpening}).
   */
  public record ReportOpened(String tabletId, String node, String log, List<String> recovered, long opening,
      ActorRef<StatusReply<Done>> replyTo) implements Command {}

  /**
   * The tablet was closed on the node writing log {@code log}: it serves it no more. If
   * {@code flushed}, that log no longer holds it; if not (its flush failed, or its node is
   * stopping without flushing), its next owner replays that log, which needs no fence first.
   * {@code opening} is the number its {@link ReportOpened} carried: a close of an opening older
   * than one the master has taken since is not recorded.
   */
  public record ReportClosed(String tabletId, String log, boolean flushed, long opening) implements Command {}

  /**
   * Moves tablet {@code tabletId} to node {@code to} (paper §5.2): answered once the move has
   * started (or refused); it finishes when the tablet serves at {@code to}.
   */
  public record Move(String tabletId, String to, ActorRef<StatusReply<Done>> replyTo) implements Command {}

  /** The source has compacted the tablet for its move (or failed to); never leaves the master's node. */
  public record MovePrepared(String tabletId, String to, boolean ok) implements Command {}

  /** The master's periodic look at the cluster. */
  public enum Tick implements Command { INSTANCE }

  /**
   * A tablet's reads and writes over the last {@code nanos} (rows, and the bytes of
   * {@code bytesRead} and {@code bytesWritten}), and its size {@code bytes}: for balancing and the key visualizer.
   */
  public record ReportLoad(String tabletId, long reads, long writes, long bytes, long nanos, long bytesRead,
      long bytesWritten) implements Command {}

  /**
   * Moves every tablet off {@code node} (a few at a time), then asks it to leave the cluster.
   * Answered at once with how many tablets it still owns; asking again is harmless.
   */
  public record Drain(String node, ActorRef<StatusReply<Integer>> replyTo) implements Command {}

  /**
   * A step of a merge ended: {@code step} 1 (the right tablet closed) or 2 (the left one
   * closed and wrote the merged manifest), {@code ok} whether it did. Never leaves the master's node.
   */
  public record MergeStep(String table, String leftId, String rightId, String childId, int step, boolean ok)
      implements Command {}

  /** Asks for the tablets' recent load. */
  public record GetLoad(ActorRef<LoadReport> replyTo) implements Command {}

  /** Recent load by tablet id: reads and writes per second, and size in bytes. */
  public record LoadReport(Map<String, TabletLoad> tablets) implements KryoSerializable {}

  /** One tablet's recent load: rows read and written per second (together and apart), and its size. */
  public record TabletLoad(double opsPerSecond, long bytes, double readsPerSecond, double writesPerSecond)
      implements KryoSerializable {}

  /** Asks for the recent load of {@code table} by key band and time (the key visualizer). */
  public record GetKeyViz(String table, ActorRef<LoadHistory.View> replyTo) implements Command {}

  /** Asks for the latest splits, moves, merges and recoveries, oldest first. */
  public record GetOperations(ActorRef<Operations> replyTo) implements Command {}

  /** The latest operations, and the cluster address of the node the master runs on. */
  public record Operations(String masterAddress, List<MasterViews.Operation> operations) implements KryoSerializable {}

  public sealed interface Event extends KryoSerializable {}

  public record TableCreated(TableInfo table, List<TabletInfo> tablets, long nextTabletNumber) implements Event {}

  /** Table {@code table}'s IAM policy or authorized views changed; {@code access} is the whole of them now. */
  public record AccessChanged(String table, TableAccess access) implements Event {}

  /** Table {@code table}'s settings changed; {@code options} are the whole of them now. */
  public record OptionsChanged(String table, TableOptions options) implements Event {}

  /** A table created before tables had locality groups, as its journal holds it: read only. */
  public record LegacyTableCreated(LegacyTableInfo table, List<TabletInfo> tablets, long nextTabletNumber)
      implements Event {
    TableCreated upgrade() {
      return new TableCreated(table.toTableInfo(), tablets, nextTabletNumber);
    }
  }

  /** A table's families, locality groups and families' groups, each the complete new set. */
  public record LocalityGroupsChanged(String table, Map<String, GcPolicy> families, Map<String, LocalityGroup> groups,
      Map<String, String> familyGroups) implements Event {}

  public record TableDeleted(String name) implements Event {}

  /** A table's families, the complete new set, as written before families could be aggregate families. */
  public record FamiliesChanged(String table, Map<String, GcPolicy> families) implements Event {}

  /** A table's families and its aggregate families' aggregators, each the complete new set. */
  public record FamiliesSet(String table, Map<String, GcPolicy> families, Map<String, Aggregator> aggregates)
      implements Event {
    public FamiliesSet {
      // sorted maps, so an event's bytes do not depend on a map's iteration order
      families = new java.util.TreeMap<>(families);
      aggregates = new java.util.TreeMap<>(aggregates);
    }
  }

  public record TabletSplit(String table, String parentId, byte[] splitRow, String leftId, String rightId)
      implements Event {}

  public record TabletFilesRecorded(String table, String tabletId, Map<String, List<String>> files, long redoPoint)
      implements Event {}

  /** Tablets given to nodes (by tablet id): created, unplaced, or whose node is gone. */
  public record TabletsAssigned(Map<String, String> owners) implements Event {
    public TabletsAssigned {
      owners = new TreeMap<>(owners);
    }
  }

  /** A move began: {@code from} compacts the tablet while still serving it. */
  public record MoveStarted(String tabletId, String from, String to) implements Event {}

  /** The move's hand-over began: {@code to} owns the tablet, and sharding hands it over. */
  public record MoveHandedOver(String tabletId, String to) implements Event {}

  /** The tablet serves at its owner again: the move ended there, or was given up. */
  public record MoveFinished(String tabletId) implements Event {}

  /** A node opened the tablet writing to log {@code log}, after replaying the logs {@code recovered}. */
  public record TabletOpened(String tabletId, String node, String log, List<String> recovered) implements Event {}

  /**
   * Tablets opened, in the order their nodes reported them: each as a {@link TabletOpened}.
   * One event for the reports that reached the master while it wrote the previous one (up to
   * {@link TabletOpenings#BATCH}), so a table of 100,000 tablets opening costs about a hundred
   * journal writes, not 100,000.
   */
  public record TabletsOpened(List<TabletOpened> opened) implements Event {}

  /** Records the open and close reports gathered since the last such message; never leaves the master's node. */
  public enum RecordOpenings implements Command { INSTANCE }

  /** The tablet was closed cleanly by the node writing log {@code log}. */
  public record TabletClosed(String tabletId, String log) implements Event {}

  /** A merge of the adjacent tablets began: neither may be opened until it ends. */
  public record MergeStarted(String table, String leftId, String rightId, String childId) implements Event {}

  /** The adjacent tablets were merged into {@code childId}, which references both one's SSTables. */
  public record TabletsMerged(String table, String leftId, String rightId, String childId) implements Event {}

  /** The merge was given up: both tablets serve on as they were. */
  public record MergeAbandoned(String leftId, String rightId) implements Event {}

  /** How the master reaches a tablet's actor wherever it is served. */
  @FunctionalInterface
  public interface Tablets {
    RecipientRef<TabletActor.Command> tablet(String tabletId);
  }

  private final ActorContext<Command> ctx;
  private final ActorRef<Topic.Command<DirectoryFeed.Change>> topic;
  private final DirectoryFeed feed;
  private final StagedSplits staged = new StagedSplits();
  private final LongSupplier clockMicros;
  private final LongSupplier nanoTime;
  private final Placements placements;
  private final FileSweeps fileSweeps;
  private final MasterViews views;
  private final TabletOpenings openings;
  private final TableCommands tables;

  private Master(PersistenceId id, ActorContext<Command> ctx, ActorRef<Topic.Command<DirectoryFeed.Change>> topic,
      LongSupplier clockMicros, LongSupplier nanoTime, Placements placements, FileSweeps fileSweeps,
      MasterViews views, OpenChecks openChecks) {
    super(id);
    this.ctx = ctx;
    this.topic = topic;
    this.feed = new DirectoryFeed(org.apache.pekko.serialization.SerializationExtension.get(
        org.apache.pekko.actor.typed.javadsl.Adapter.toClassic(ctx.getSystem())));
    this.clockMicros = clockMicros;
    this.nanoTime = nanoTime;
    this.placements = placements;
    this.fileSweeps = fileSweeps;
    this.views = views;
    this.openings = new TabletOpenings(Effect(), ctx, placements, openChecks, this::publish);
    this.tables = new TableCommands(Effect(), placements, clockMicros, this::publish);
  }

  /**
   * A master that keeps the directory but places no tablet (no cluster): for tests of the
   * directory alone. {@code clockMicros} stamps table creation.
   */
  public static Behavior<Command> create(PersistenceId id, LongSupplier clockMicros) {
    return create(id, clockMicros, MasterNodes.NONE, null, MasterSettings.DEFAULTS);
  }

  /**
   * The master; it publishes on its own handle of the {@link #TOPIC} topic (topics of one
   * name join across the cluster), places tablets on {@code nodes} and moves them by
   * talking to {@code tablets} (null: it does not move tablets). {@code clockMicros} stamps
   * table creation.
   */
  public static Behavior<Command> create(PersistenceId id, LongSupplier clockMicros, MasterNodes nodes, Tablets tablets,
      MasterSettings settings) {
    return create(id, clockMicros, System::nanoTime, nodes, tablets, settings);
  }

  /**
   * The master, reading the monotonic time its placements, fences and sweeps go by from
   * {@code nanoTime} (tests move it with the actor system's manual time).
   */
  public static Behavior<Command> create(PersistenceId id, LongSupplier clockMicros, LongSupplier nanoTime,
      MasterNodes nodes, Tablets tablets, MasterSettings settings) {
    return Behaviors.setup(ctx -> Behaviors.withTimers(timers -> {
      timers.startTimerWithFixedDelay(Tick.INSTANCE, settings.tick());
      return new Master(id, ctx, ctx.spawn(Topic.create(DirectoryFeed.Change.class, TOPIC), "directory-topic"), clockMicros,
          nanoTime, new Placements(nodes, tablets, settings, nanoTime),
          new FileSweeps(nodes, settings.sweepEvery(), nanoTime.getAsLong()),
          new MasterViews(new LoadHistory(settings.keyVizColumn().toMillis(), settings.keyVizColumns()),
              MasterCounts.of(ctx.getSystem())),
          new OpenChecks(nodes, settings.closeReportWait(), nanoTime));
    }));
  }

  /** {@code tabula.master.journal-plugin}: Tabula's journal on the storage root unless set otherwise. */
  @Override
  public String journalPluginId() {
    return ctx.getSystem().settings().config().getString("tabula.master.journal-plugin");
  }

  /** {@code tabula.master.snapshot-plugin}: Tabula's snapshots on the storage root unless set otherwise. */
  @Override
  public String snapshotPluginId() {
    return ctx.getSystem().settings().config().getString("tabula.master.snapshot-plugin");
  }

  @Override
  public Directory emptyState() {
    return Directory.EMPTY;
  }

  @Override
  public SnapshotAdapter<Directory> snapshotAdapter() {
    return new SnapshotAdapter<>() {
      @Override
      public Object toJournal(Directory state) {
        return state;
      }

      @Override
      public Directory fromJournal(Object from) {
        return from instanceof LegacyDirectory l ? l.toDirectory() : (Directory) from;
      }
    };
  }

  /** When to snapshot: owned by the master's thread. */
  private final SnapshotSpacing snapshots = new SnapshotSpacing();

  @Override
  public boolean shouldSnapshot(Directory state, Event event, long sequenceNr) {
    return snapshots.snapshotAt(sequenceNr, state.tabletCount());
  }

  /** Every {@link SnapshotSpacing#MAX_EVENTS} events; the snapshots between are {@link #shouldSnapshot}'s. */
  @Override
  public RetentionCriteria retentionCriteria() {
    return RetentionCriteria.snapshotEvery(SnapshotSpacing.MAX_EVENTS, 2).withDeleteEventsOnSnapshot();
  }

  @Override
  public SignalHandler<Directory> signalHandler() {
    return newSignalHandlerBuilder().onSignal(RecoveryCompleted.instance(), d -> {
      snapshots.recovered(lastSequenceNumber(ctx));
      views.recovered();
      feed.recovered();
      publish(feed.heartbeat(d, nanoTime.getAsLong()));
      // A new master looks at once (fences, placements) instead of at its first timer tick: a
      // dead master's node's tablets wait for this look.
      ctx.getSelf().tell(Tick.INSTANCE);
    }).onSignal(PostStop.instance(), d -> PublishedHere.of(ctx.getSystem()).stopped()).build();
  }

  @Override
  public CommandHandler<Command, Event, Directory> commandHandler() {
    return newCommandHandlerBuilder().forAnyState()
        .onCommand(CreateTable.class, tables::onCreateTable)
        .onCommand(CreateRestoredTable.class, tables::onCreateRestoredTable)
        .onCommand(StageSplits.class, (d, c) -> {
          Refusal refused = staged.stage(c.upload(), c.splits(), nanoTime.getAsLong());
          return Effect().reply(c.replyTo(), refused != null ? refused.reply() : StatusReply.ack());
        })
        .onCommand(CreateStagedTable.class, (d, c) -> {
          List<byte[]> splits = staged.take(c.upload(), c.count());
          if (splits == null) {
            return Effect().reply(c.replyTo(), Refusal.of(ErrorCode.UNAVAILABLE, "the initial splits sent for table "
                + c.name() + " are not all here (the master changed while they were sent): retry").reply());
          }
          return tables.onCreateTable(d, new CreateTable(c.name(), c.families(), c.aggregates(), splits,
              c.replyTo()));
        })
        .onCommand(DeleteTable.class, tables::onDeleteTable)
        .onCommand(ModifyFamilies.class, (d, c) -> tables.change(d, c.table(), c.replyTo(),
            t -> TableChanges.modifyFamilies(t, c.changes())))
        .onCommand(SetLocalityGroup.class, (d, c) -> tables.change(d, c.table(), c.replyTo(),
            t -> TableChanges.setLocalityGroup(t, c)))
        .onCommand(ChangeAccess.class, (d, c) -> tables.change(d, c.table(), c.replyTo(),
            t -> new AccessChanged(t.name(), t.access().after(c.change()))))
        .onCommand(ChangeOptions.class, (d, c) -> tables.change(d, c.table(), c.replyTo(),
            t -> new OptionsChanged(t.name(), t.options().after(c.change()))))
        .onCommand(GetDirectory.class, (d, c) -> Effect().reply(c.replyTo(), d))
        .onCommand(GetChanges.class, (d, c) -> Effect().reply(c.replyTo(), feed.since(d, c.since(),
            c.node(), nanoTime.getAsLong())))
        .onCommand(GetChunk.class, (d, c) -> Effect().reply(c.replyTo(), feed.chunk(c.key(), c.index())))
        .onCommand(Locate.class, (d, c) -> Effect().reply(c.replyTo(), TabletLookup.answer(d, c)))
        .onCommand(NamedLogs.class, (d, c) -> Effect().reply(c.replyTo(), TabletLookup.namedLogs(d, c.folders())))
        .onCommand(NeverWritten.class, (d, c) -> Effect().reply(c.replyTo(), TabletLookup.neverWritten(d, c.ids())))
        .onCommand(RecordSplit.class, openings::onRecordSplit)
        .onCommand(RecordFiles.class, openings::onRecordFiles)
        .onCommand(Place.class, openings::onPlace)
        .onCommand(MayOpen.class, openings::onMayOpen)
        .onCommand(ReportOpened.class, openings::onReportOpened)
        .onCommand(RecordOpenings.class, openings::onRecordOpenings)
        .onCommand(ReportClosed.class, openings::onReportClosed)
        .onCommand(Move.class, openings::onMove)
        .onCommand(MovePrepared.class, openings::onMovePrepared)
        .onCommand(Tick.class, this::onTick)
        .onCommand(ReportLoad.class, (d, c) -> {
          placements.load(c);
          views.load(d, c);
          return Effect().none();
        })
        .onCommand(GetKeyViz.class, (d, c) -> Effect().reply(c.replyTo(), views.keyViz(d, c.table())))
        .onCommand(GetOperations.class, (d, c) -> Effect().reply(c.replyTo(), new Operations(ctx.getSystem().address().toString(),
            views.operations())))
        .onCommand(Drain.class, this::onDrain)
        .onCommand(MergeStep.class, this::onMergeStep)
        .onCommand(GetLoad.class, (d, c) -> Effect().reply(c.replyTo(), MasterViews.loadReport(placements.loads())))
        .onCommand(Stop.class, (d, c) -> Effect().stop())
        .build();
  }

  private Effect<Event, Directory> onTick(Directory d, Tick c) {
    long now = nanoTime.getAsLong();
    feed.forgetOldBlobs(now);
    staged.forgetOld(now);
    publish(feed.next(d, now, true));
    fileSweeps.onTick(d, now);
    openings.onTick(d);
    Placements.Plan plan = placements.onTick(d, ctx.getLog());
    if (plan.isEmpty()) {
      return Effect().none();
    }
    List<Event> events = new ArrayList<>(plan.events());
    events.addAll(plan.moves());
    events.addAll(plan.merges());
    return Effect().persist(events).thenRun(s -> {
      publish(s);
      plan.moves().forEach(m -> placements.prepare(ctx, m.tabletId(), m.from(), m.to()));
      plan.merges().forEach(m -> placements.closeRight(ctx, m));
    });
  }

  private Effect<Event, Directory> onMergeStep(Directory d, MergeStep c) {
    TabletPlacement left = d.placementOf(c.leftId());
    if (left.state() != TabletPlacement.State.MERGING || !left.peer().equals(c.childId())) {
      return Effect().none();
    }
    if (!c.ok()) {
      placements.mergeEnded(c.leftId(), ctx.getLog(), "of " + c.leftId() + " and " + c.rightId() + " given up at step "
          + c.step());
      return Effect().persist(new MergeAbandoned(c.leftId(), c.rightId())).thenRun(this::publish);
    }
    if (c.step() == 1) {
      placements.mergeLeft(ctx, new MergeStarted(c.table(), c.leftId(), c.rightId(), c.childId()));
      return Effect().none();
    }
    placements.mergeEnded(c.leftId(), ctx.getLog(), "of " + c.leftId() + " and " + c.rightId() + " into "
        + c.childId() + " done");
    return Effect().persist(new TabletsMerged(c.table(), c.leftId(), c.rightId(), c.childId())).thenRun(this::publish);
  }

  private Effect<Event, Directory> onDrain(Directory d, Drain c) {
    if (!placements.drain(c.node())) {
      return Effect().reply(c.replyTo(), Refusal.of(ErrorCode.NOT_FOUND, "node " + c.node()
          + " is not a member of the cluster").reply());
    }
    ctx.getLog().info("draining node {}: {} tablets to move", c.node(), d.tabletsPerNode().getOrDefault(c.node(), 0));
    return Effect().reply(c.replyTo(), StatusReply.success(d.tabletsPerNode().getOrDefault(c.node(), 0)));
  }

  /** Publishes the events journaled since the last change published (docs/cluster.md, "How the directory travels"). */
  private void publish(Directory d) {
    publish(feed.next(d, nanoTime.getAsLong(), false));
  }

  private void publish(DirectoryFeed.Change c) {
    if (c != null) {
      PublishedHere.of(ctx.getSystem()).published(c.after()); // before the change reaches this node's copy
      topic.tell(Topic.publish(c));
    }
  }

  @Override
  public EventHandler<Directory, Event> eventHandler() {
    return newEventHandlerBuilder().forAnyState().onAnyEvent((d, e) -> {
      Directory next = DirectoryEvents.apply(d, e);
      views.applied(d, e);
      feed.applied(d, e, next);
      return next;
    });
  }
}
