package io.tabula.actors.tablet;

import io.tabula.persistence.tablet.Tablet;
import org.apache.pekko.actor.typed.ActorRef;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The tablets this node's actors serve right now, so the node's gRPC layer can read them
 * without a message through the shard region and the tablet's mailbox: a tablet's reads
 * never needed its actor (they run on engine snapshots, off the actor's thread), only its
 * writes do. A tablet's actor adds its tablet when it starts serving and takes it out when
 * the tablet splits or the actor stops; a read that meets a tablet closed in between fails
 * as moved, like one sent to the actor. Tablets not listed here are read through their
 * actors. Thread-safe.
 */
public final class LocalTablets {
  /** What the compiled filters kept for reuse may weigh together, in bytes (see {@link FilterCache}). */
  private static final long COMPILED_FILTERS_BYTES = 64L << 20;

  /**
   * A served tablet's reads and its actor. The actor is there so that a request for a tablet
   * served here goes straight to its mailbox instead of through the shard region and the shard
   * (two hand-overs between threads); one that reaches an actor that has stopped meanwhile is
   * a dead letter, answered as moved (the node's {@code LostRequests}), and its sender retries.
   */
  private record Served(TabletReads reads, ActorRef<TabletActor.Command> actor) {}

  private final ConcurrentHashMap<String, Served> serving = new ConcurrentHashMap<>();
  private final FilterCache filters = new FilterCache(COMPILED_FILTERS_BYTES);
  /**
   * Tablets whose actor asked to stop because they were idle, by id: when it asked
   * (System.nanoTime). Until this node's copy of the directory shows the close (no log names the
   * tablet), the tablet would look like one that must open now ({@code OwnedTablets}); it is
   * not woken again for {@link #CLOSING_IDLE_NANOS}, after which a close the master never
   * recorded is opened again, to replay this node's log.
   */
  private final ConcurrentHashMap<String, Long> closingIdle = new ConcurrentHashMap<>();
  static final long CLOSING_IDLE_NANOS = java.util.concurrent.TimeUnit.SECONDS.toNanos(30);
  /**
   * The most idle closes a node asks for within {@link #CLOSING_IDLE_NANOS}: a node whose
   * tablets all went idle at once (a bulk load into every tablet of a large table) closes them
   * over minutes rather than all at once, so their records (the master's, up to 1,000 per journal
   * write) reach the directory well within the 30 s each is not woken meanwhile, and this map
   * stays small.
   */
  static final int MAX_CLOSING_IDLE = 2_000;
  /**
   * Numbers this node's openings of tablets in the order they began. An open report and the
   * close report of the same opening carry its number, so the master can tell a close that
   * reached it after a later opening's open (docs/fencing.md, "A close never undoes a later
   * open").
   */
  private final java.util.concurrent.atomic.AtomicLong openings = new java.util.concurrent.atomic.AtomicLong();
  /** Each table's running totals on this node (its tablets' reads and writes), for the metrics. */
  private final ConcurrentHashMap<String, TabletLoad.TableTotals> tables = new ConcurrentHashMap<>();

  /** The next opening's number: greater than every earlier one's on this node. */
  public long nextOpening() {
    return openings.incrementAndGet();
  }

  /**
   * Checks a serialized filter by compiling it into the cache the tablets' reads use, so the
   * read that follows finds it compiled.
   *
   * @throws io.tabula.streams.filter.InvalidFilterException naming the field under the root
   *     {@code filter} if it is not valid
   */
  public void checkFilter(byte[] filter) {
    filters.compile(filter);
  }

  /** The reads of tablet {@code tabletId}, or null when no actor of this node serves it now. */
  public TabletReads reads(String tabletId) {
    Served s = serving.get(tabletId);
    return s == null ? null : s.reads();
  }

  /** The actor of tablet {@code tabletId} when one of this node serves it now, else null. */
  public ActorRef<TabletActor.Command> actor(String tabletId) {
    Served s = serving.get(tabletId);
    return s == null ? null : s.actor();
  }

  /** How many tablets actors of this node serve now. */
  public int count() {
    return serving.size();
  }

  /** Whether an actor of this node serves tablet {@code tabletId} now. */
  public boolean serves(String tabletId) {
    return serving.containsKey(tabletId);
  }

  /** The tables whose tablets this node has served, with their totals here. */
  public Map<String, TabletLoad.TableTotals> tableTotals() {
    return Map.copyOf(tables);
  }

  /** Forgets the totals of a table that is gone (the counts start again if it comes back). */
  public void forgetTable(String table) {
    tables.remove(table);
  }

  /** The tablets served here now, by id, with their load. */
  public Map<String, TabletLoad> loads() {
    Map<String, TabletLoad> out = new HashMap<>();
    serving.forEach((id, s) -> out.put(id, s.reads().load()));
    return out;
  }

  /**
   * Whether tablet {@code tabletId} was closed here because it was idle less than 30 s ago and
   * has not opened since: it must not be woken while its close travels to the directory.
   */
  public boolean closingIdle(String tabletId, long nowNanos) {
    Long at = closingIdle.get(tabletId);
    if (at == null) {
      return false;
    }
    if (nowNanos - at < CLOSING_IDLE_NANOS) {
      return true;
    }
    closingIdle.remove(tabletId, at);
    return false;
  }

  /** Forgets the idle closes asked for 30 s or more before {@code nowNanos}. */
  public void forgetClosingIdle(long nowNanos) {
    closingIdle.values().removeIf(at -> nowNanos - at >= CLOSING_IDLE_NANOS);
  }

  /**
   * Tablet {@code tabletId}'s actor asks to stop, idle: whether it may now (false while
   * {@value #MAX_CLOSING_IDLE} idle closes were asked for within the last 30 s; it asks again
   * at a later check).
   */
  boolean closesIdle(String tabletId) {
    long now = System.nanoTime();
    if (closingIdle.size() >= MAX_CLOSING_IDLE) {
      forgetClosingIdle(now);
      if (closingIdle.size() >= MAX_CLOSING_IDLE) {
        return false;
      }
    }
    closingIdle.put(tabletId, now);
    return true;
  }

  /** The reads of an open tablet of {@code table}, listed as served from now on. */
  TabletReads serve(String table, String tabletId, Tablet tablet, ActorRef<TabletActor.Command> actor) {
    closingIdle.remove(tabletId);
    TabletLoad load = new TabletLoad(table, tables.computeIfAbsent(table, t -> new TabletLoad.TableTotals()));
    TabletReads reads = new TabletReads(tabletId, tablet, filters, load);
    serving.put(tabletId, new Served(reads, actor));
    return reads;
  }

  /** Takes out {@code reads} (and its actor), if they are still the ones listed for their tablet. */
  void stop(String tabletId, TabletReads reads) {
    serving.computeIfPresent(tabletId, (id, s) -> s.reads() == reads ? null : s);
  }
}
