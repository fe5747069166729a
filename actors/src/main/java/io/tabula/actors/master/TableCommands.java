package io.tabula.actors.master;

import io.tabula.actors.master.Master.Event;
import io.tabula.protocol.errors.ErrorCode;
import io.tabula.protocol.errors.Refusal;
import io.tabula.protocol.errors.Refused;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import java.util.function.LongSupplier;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.pattern.StatusReply;
import org.apache.pekko.persistence.typed.javadsl.Effect;
import org.apache.pekko.persistence.typed.javadsl.EffectFactories;

/**
 * The master's commands that make, change or delete a table: each checks the directory,
 * persists the events {@link TableChanges} gives (or answers the refusal), publishes them and
 * answers the table. Owned by the master's thread, as the master's own handlers are.
 */
final class TableCommands {
  private final EffectFactories<Event, Directory> effects;
  private final Placements placements;
  /** Stamps a table's creation. */
  private final LongSupplier clockMicros;
  /** Publishes what the master journaled to the nodes. */
  private final Consumer<Directory> publish;

  TableCommands(EffectFactories<Event, Directory> effects, Placements placements, LongSupplier clockMicros,
      Consumer<Directory> publish) {
    this.effects = effects;
    this.placements = placements;
    this.clockMicros = clockMicros;
    this.publish = publish;
  }

  Effect<Event, Directory> onCreateTable(Directory d, Master.CreateTable c) {
    if (d.table(c.name()) != null) {
      return effects.reply(c.replyTo(), Refusal.of(ErrorCode.ALREADY_EXISTS, "table " + c.name()
          + " already exists").reply());
    }
    return created(d, TableChanges.create(new TableInfo(c.name(), c.families(), clockMicros.getAsLong())
        .withFamilies(c.families(), c.aggregates()), c.splits(), d.nextTabletNumber()), c.replyTo());
  }

  /** Persists {@code created}, its tablets spread over the nodes, and answers the table. */
  private Effect<Event, Directory> created(Directory d, Master.TableCreated created,
      ActorRef<StatusReply<TableInfo>> replyTo) {
    List<Event> events = new ArrayList<>(List.of(created));
    Map<String, String> spread = placements.spread(d, created.tablets().stream().map(TabletInfo::id).toList());
    if (!spread.isEmpty()) {
      events.add(new Master.TabletsAssigned(spread));
    }
    return effects.persist(events).thenRun(publish::accept)
        .thenReply(replyTo, s -> StatusReply.success(s.table(created.table().name())));
  }

  Effect<Event, Directory> onDeleteTable(Directory d, Master.DeleteTable c) {
    TableInfo t = d.table(c.name());
    if (t == null) {
      return effects.reply(c.replyTo(), Refusal.of(ErrorCode.NOT_FOUND, "table " + c.name() + " not found").reply());
    }
    if (t.options().deletionProtection()) {
      return effects.reply(c.replyTo(), Refusal.of(ErrorCode.FAILED_PRECONDITION, "table " + c.name()
          + " is protected from deletion: turn its deletion_protection off (UpdateTable) first").reply());
    }
    return effects.persist(new Master.TableDeleted(c.name())).thenRun(publish::accept)
        .thenReply(c.replyTo(), s -> StatusReply.ack());
  }

  /** Persists {@code change} of table {@code name} and answers the table as changed, or the refusal. */
  Effect<Event, Directory> change(Directory d, String name, ActorRef<StatusReply<TableInfo>> replyTo,
      java.util.function.Function<TableInfo, Event> change) {
    TableInfo t = d.table(name);
    if (t == null) {
      return effects.reply(replyTo, Refusal.of(ErrorCode.NOT_FOUND, "table " + name + " not found").reply());
    }
    Event e;
    try {
      e = change.apply(t);
    } catch (Refused r) {
      return effects.reply(replyTo, r.refusal().reply());
    }
    return effects.persist(e).thenRun(publish::accept).thenReply(replyTo, s -> StatusReply.success(s.table(name)));
  }

  /** A table restored from a backup (docs/backups.md), or the refusal. */
  Effect<Event, Directory> onCreateRestoredTable(Directory d, Master.CreateRestoredTable c) {
    try {
      return created(d, TableChanges.restored(d, c, clockMicros.getAsLong()), c.replyTo());
    } catch (Refused r) {
      return effects.reply(c.replyTo(), r.refusal().reply());
    }
  }
}
