package io.tabula.actors.master;

import io.tabula.persistence.encoding.ByteArrays;
import io.tabula.persistence.schema.GcPolicy;
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
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.actor.typed.pubsub.Topic;
import org.apache.pekko.pattern.StatusReply;
import org.apache.pekko.persistence.typed.PersistenceId;
import org.apache.pekko.persistence.typed.RecoveryCompleted;
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
  /** The topic name the master publishes {@link Directory} copies on. */
  public static final String TOPIC = "tabula-directory";
  public static final PersistenceId PERSISTENCE_ID = PersistenceId.ofUniqueId("tabula-master");

  public sealed interface Command extends KryoSerializable {}

  /** Creates a table with its families and one tablet per initial split range. */
  public record CreateTable(String name, Map<String, GcPolicy> families, List<byte[]> splits,
      ActorRef<StatusReply<TableInfo>> replyTo) implements Command {}

  public record DeleteTable(String name, ActorRef<StatusReply<Done>> replyTo) implements Command {}

  /** One change of a table's families: create (must not exist), update (must exist) or drop. */
  public record FamilyChange(String family, Kind kind, GcPolicy gcPolicy) implements KryoSerializable {
    public enum Kind { CREATE, UPDATE, DROP }
  }

  /** Applies every change or none. */
  public record ModifyFamilies(String table, List<FamilyChange> changes, ActorRef<StatusReply<TableInfo>> replyTo)
      implements Command {}

  public record GetDirectory(ActorRef<Directory> replyTo) implements Command {}

  /** A tablet has split (its manifest already says so): record the two children in its place. */
  public record RecordSplit(String table, String parentId, byte[] splitRow, String leftId, String rightId,
      ActorRef<StatusReply<Done>> replyTo) implements Command {}

  /** A tablet's SSTables and redo point after a flush or compaction. */
  public record RecordFiles(String table, String tabletId, Map<String, List<String>> files, long redoPoint)
      implements Command {}

  /** Stops the master (the singleton's hand-over message). */
  public enum Stop implements Command { INSTANCE }

  public sealed interface Event extends KryoSerializable {}

  public record TableCreated(TableInfo table, List<TabletInfo> tablets, long nextTabletNumber) implements Event {}

  public record TableDeleted(String name) implements Event {}

  public record FamiliesChanged(String table, Map<String, GcPolicy> families) implements Event {}

  public record TabletSplit(String table, String parentId, byte[] splitRow, String leftId, String rightId)
      implements Event {}

  public record TabletFilesRecorded(String table, String tabletId, Map<String, List<String>> files, long redoPoint)
      implements Event {}

  private final ActorRef<Topic.Command<Directory>> topic;
  private final LongSupplier clockMicros;

  private Master(PersistenceId id, ActorRef<Topic.Command<Directory>> topic, LongSupplier clockMicros) {
    super(id);
    this.topic = topic;
    this.clockMicros = clockMicros;
  }

  /**
   * The master; it publishes on its own handle of the {@link #TOPIC} topic (topics of one
   * name join across the cluster). {@code clockMicros} stamps table creation.
   */
  public static Behavior<Command> create(PersistenceId id, LongSupplier clockMicros) {
    return Behaviors.setup(ctx -> new Master(id, ctx.spawn(Topic.create(Directory.class, TOPIC), "directory-topic"),
        clockMicros));
  }

  @Override
  public Directory emptyState() {
    return Directory.EMPTY;
  }

  @Override
  public RetentionCriteria retentionCriteria() {
    return RetentionCriteria.snapshotEvery(200, 2);
  }

  @Override
  public SignalHandler<Directory> signalHandler() {
    return newSignalHandlerBuilder().onSignal(RecoveryCompleted.instance(), this::publish).build();
  }

  @Override
  public CommandHandler<Command, Event, Directory> commandHandler() {
    return newCommandHandlerBuilder().forAnyState()
        .onCommand(CreateTable.class, this::onCreateTable)
        .onCommand(DeleteTable.class, this::onDeleteTable)
        .onCommand(ModifyFamilies.class, this::onModifyFamilies)
        .onCommand(GetDirectory.class, (d, c) -> Effect().reply(c.replyTo(), d))
        .onCommand(RecordSplit.class, this::onRecordSplit)
        .onCommand(RecordFiles.class, this::onRecordFiles)
        .onCommand(Stop.class, (d, c) -> Effect().stop())
        .build();
  }

  private Effect<Event, Directory> onCreateTable(Directory d, CreateTable c) {
    if (d.table(c.name()) != null) {
      return Effect().reply(c.replyTo(), Refusal.of(ErrorCode.ALREADY_EXISTS, "table " + c.name()
          + " already exists").reply());
    }
    List<byte[]> splits = new ArrayList<>(c.splits());
    splits.sort(ByteArrays::compare);
    List<TabletInfo> tablets = new ArrayList<>();
    long n = d.nextTabletNumber();
    byte[] start = new byte[0];
    for (byte[] s : splits) {
      if (s.length == 0 || ByteArrays.compare(s, start) == 0) {
        continue;
      }
      tablets.add(TabletInfo.empty(c.name(), tabletId(c.name(), n++), start, s));
      start = s;
    }
    tablets.add(TabletInfo.empty(c.name(), tabletId(c.name(), n++), start, new byte[0]));
    TableInfo table = new TableInfo(c.name(), c.families(), clockMicros.getAsLong());
    return Effect().persist(new TableCreated(table, tablets, n)).thenRun(this::publish)
        .thenReply(c.replyTo(), s -> StatusReply.success(s.table(c.name())));
  }

  private static String tabletId(String table, long n) {
    return table + "-" + n;
  }

  private Effect<Event, Directory> onDeleteTable(Directory d, DeleteTable c) {
    if (d.table(c.name()) == null) {
      return Effect().reply(c.replyTo(), Refusal.of(ErrorCode.NOT_FOUND, "table " + c.name() + " not found").reply());
    }
    return Effect().persist(new TableDeleted(c.name())).thenRun(this::publish)
        .thenReply(c.replyTo(), s -> StatusReply.ack());
  }

  private Effect<Event, Directory> onModifyFamilies(Directory d, ModifyFamilies c) {
    TableInfo t = d.table(c.table());
    if (t == null) {
      return Effect().reply(c.replyTo(), Refusal.of(ErrorCode.NOT_FOUND, "table " + c.table() + " not found").reply());
    }
    Map<String, GcPolicy> families = new TreeMap<>(t.families());
    for (int i = 0; i < c.changes().size(); i++) {
      FamilyChange ch = c.changes().get(i);
      boolean exists = families.containsKey(ch.family());
      String where = "modifications[" + i + "]";
      switch (ch.kind()) {
        case CREATE -> {
          if (exists) {
            return Effect().reply(c.replyTo(), Refusal.of(ErrorCode.ALREADY_EXISTS, where + ".create: family "
                + ch.family() + " already exists").reply());
          }
          families.put(ch.family(), ch.gcPolicy());
        }
        case UPDATE -> {
          if (!exists) {
            return Effect().reply(c.replyTo(), Refusal.of(ErrorCode.NOT_FOUND, where + ".update: family "
                + ch.family() + " not found").reply());
          }
          families.put(ch.family(), ch.gcPolicy());
        }
        case DROP -> {
          if (!exists) {
            return Effect().reply(c.replyTo(), Refusal.of(ErrorCode.NOT_FOUND, where + ".drop: family "
                + ch.family() + " not found").reply());
          }
          families.remove(ch.family());
        }
      }
    }
    return Effect().persist(new FamiliesChanged(c.table(), families)).thenRun(this::publish)
        .thenReply(c.replyTo(), s -> StatusReply.success(s.table(c.table())));
  }

  private Effect<Event, Directory> onRecordSplit(Directory d, RecordSplit c) {
    if (d.tablet(c.table(), c.parentId()) == null) {
      return d.tablet(c.table(), c.leftId()) != null ? Effect().reply(c.replyTo(), StatusReply.ack())
          : Effect().reply(c.replyTo(), Refusal.of(ErrorCode.NOT_FOUND, "tablet " + c.parentId() + " of table "
              + c.table() + " is not known").reply());
    }
    return Effect().persist(new TabletSplit(c.table(), c.parentId(), c.splitRow(), c.leftId(), c.rightId()))
        .thenRun(this::publish).thenReply(c.replyTo(), s -> StatusReply.ack());
  }

  private Effect<Event, Directory> onRecordFiles(Directory d, RecordFiles c) {
    TabletInfo t = d.tablet(c.table(), c.tabletId());
    if (t == null || (t.files().equals(c.files()) && t.redoPoint() == c.redoPoint())) {
      return Effect().none();
    }
    return Effect().persist(new TabletFilesRecorded(c.table(), c.tabletId(), c.files(), c.redoPoint()));
  }

  private void publish(Directory d) {
    topic.tell(Topic.publish(d));
  }

  @Override
  public EventHandler<Directory, Event> eventHandler() {
    return newEventHandlerBuilder().forAnyState()
        .onEvent(TableCreated.class, (d, e) -> d.withTable(e.table(), e.tablets(), e.nextTabletNumber()))
        .onEvent(TableDeleted.class, (d, e) -> d.withoutTable(e.name()))
        .onEvent(FamiliesChanged.class, (d, e) -> d.withTable(d.table(e.table()).withFamilies(e.families()),
            d.tabletsOf(e.table()), d.nextTabletNumber()))
        .onEvent(TabletSplit.class, Master::applySplit)
        .onEvent(TabletFilesRecorded.class, Master::applyFiles)
        .build();
  }

  private static Directory applyFiles(Directory d, TabletFilesRecorded e) {
    TabletInfo t = d.tablet(e.table(), e.tabletId());
    return t == null ? d
        : d.withTabletReplaced(e.table(), t.id(), List.of(t.withFiles(e.files(), e.redoPoint())));
  }

  private static Directory applySplit(Directory d, TabletSplit e) {
    TabletInfo parent = d.tablet(e.table(), e.parentId());
    if (parent == null) {
      return d;
    }
    TabletInfo left = new TabletInfo(e.table(), e.leftId(), parent.startRow(), e.splitRow(), parent.files(),
        parent.redoPoint());
    TabletInfo right = new TabletInfo(e.table(), e.rightId(), e.splitRow(), parent.endRow(), parent.files(),
        parent.redoPoint());
    return d.withTabletReplaced(e.table(), e.parentId(), List.of(left, right));
  }
}
