package io.tabula.cluster.routing;

import com.google.errorprone.annotations.concurrent.GuardedBy;
import io.tabula.actors.Stages;
import io.tabula.actors.master.Master;
import io.tabula.actors.master.TabletInfo;
import io.tabula.actors.master.TabletLookup;
import io.tabula.persistence.encoding.ByteArrays;
import io.tabula.protocol.errors.ErrorCode;
import io.tabula.protocol.errors.Refusal;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.AskPattern;

/**
 * Where this node finds the tablet holding a row (paper §5.1): a cache of tablets' row ranges
 * looked up from the master's directory ({@link Master.Locate}), the tablet asked for and the
 * {@value #PREFETCH} after it per lookup (a batch: {@value TabletLookup#MOST_TABLETS}), instead
 * of a search of the whole directory. An entry is never trusted blindly: a
 * request sent to a tablet that has since split or merged is answered as moved by that tablet,
 * the router forgets the entry ({@link #forget}) and looks the row up again, as a Bigtable
 * client does with its cached METADATA rows.
 *
 * <p>What a lookup answers is the master's directory at some version; an answer never replaces
 * an entry from a newer version (an older answer may still bring back an entry {@link #forget}
 * dropped: it costs one more moved answer). A table deleted and made again under its name is
 * another table: its entries are dropped when an answer or the node's copy says so. Past
 * {@code most} tablets, the tables least recently used are dropped whole, down to three
 * quarters of it (a table over that keeps only what was just looked up, which may be up to
 * {@value TabletLookup#MOST_TABLETS} tablets more).
 *
 * <p>A request that misses looks up with one lookup per table at a time: requests that miss
 * while one is under way wait for it and look again, or fail as it failed, so a split met by a
 * thousand requests costs a lookup or two, not a thousand. A batch's lookups ({@link #cover})
 * run a few at a time beside them.
 *
 * <p>Each entry carries its tablet's owner, from the lookup and then from the master's changes
 * ({@link #changed}), by directory version: a stale owner costs one more hop, never a wrong answer.
 *
 * <p>A request whose lookup the master does not answer in {@link #LOOKUP_TIMEOUT} (a master
 * failing over, or stopped) is routed by the node's copy ({@code fallback}): tablets check
 * their own row ranges, so a stale copy costs a moved answer, never a wrong one.
 *
 * <p>Thread-safe: readers read the concurrent maps without a lock; entries of a table are
 * added and removed under that table's {@link Ranges} lock, so an answer's removal of what it
 * overlaps and its additions are one step for other writers (a reader between them may miss,
 * and looks up; it never finds an entry that does not hold its row: {@link #cached} checks).
 * A thread holds one table's lock at a time, taken last: {@link #keepTablesOf} and
 * {@link #changed} run as listeners of the node's directory copy, under that copy's lock, and nothing here takes the
 * copy's lock. {@code held} changes only under the lock of the table whose entries change, by
 * what changed, and nothing is added to a table no longer in {@code tables}: it is the exact
 * count of entries once writers are done.
 */
public final class TabletLocations {
  private static final Comparator<byte[]> ROWS = ByteArrays::compare;
  /** Tablets asked for by a lookup for one request: the one it needs and its neighbours. */
  static final int PREFETCH = 256;
  /** How long the lookup of a request that can fall back may take, at most (less if the ask timeout is). */
  static final Duration LOOKUP_TIMEOUT = Duration.ofSeconds(2);
  /** How many lookups of one batch run at once. */
  private static final int COVER_AT_ONCE = 4;

  private final ActorRef<Master.Command> master;
  private final ActorSystem<?> system;
  private final Duration askTimeout;
  /** How long the lookup of a request that may fall back may take. */
  private final Duration lookupTimeout;
  private final int most;
  /** The tablet at a position by the node's copy of the directory (null: none), when a lookup fails. */
  private final java.util.function.Function<TabletPosition, TabletInfo> fallback;
  private final ConcurrentHashMap<String, Ranges> tables = new ConcurrentHashMap<>();
  /** Each cached tablet by id (to find its entry when its owner changes); changed with the entries, under their table's lock. */
  private final ConcurrentHashMap<String, TabletInfo> ids = new ConcurrentHashMap<>();
  /** Entries held over all tables (see the class comment; read without a lock). */
  private final AtomicInteger held = new AtomicInteger();
  private final AtomicLong lookups = new AtomicLong();
  /**
   * The newest directory version of the master's changes taken that gave owners, or whose events
   * the node lacked ({@link #changed}): an answer older than that may name owners those changes
   * replaced, so its owners are taken as unknown.
   */
  private final AtomicLong changesTaken = new AtomicLong(-1);

  /** One table's cached tablets by start row, and its lookup under way. */
  private static final class Ranges {
    /** Added to and removed from only while holding this object's lock. */
    final ConcurrentSkipListMap<byte[], Entry> byStart = new ConcurrentSkipListMap<>(ROWS);
    /** The lookup under way for this table, or null. */
    final AtomicReference<CompletableFuture<Void>> looking = new AtomicReference<>();
    volatile long usedAt = System.nanoTime();
    /** When the table the entries are of was made (its {@code createdMicros}); set under the lock. */
    volatile long created = -1;
    /** The newest directory version of the answers taken. */
    @GuardedBy("this")
    long newest = -1;
  }

  /**
   * A tablet as the master's directory had it at {@code version}, and its owner ("" for none,
   * null when not known) as the directory had it at {@code ownerVersion}, learned at
   * {@code ownerNanos} (System.nanoTime).
   */
  private record Entry(TabletInfo tablet, long version, String owner, long ownerVersion, long ownerNanos) {
    Entry withOwner(String o, long v) {
      return new Entry(tablet, version, o, v, System.nanoTime());
    }
  }

  /**
   * @param most the most tablets held ({@code tabula.node.location-cache-tablets})
   * @param askTimeout how long an ask may take (a request's lookup, with a fallback:
   *     {@link #LOOKUP_TIMEOUT} at most)
   * @param fallback the tablet at a position by the node's copy of the directory, or null; used
   *     when a request's lookup fails other than NOT_FOUND (null: no fallback)
   */
  public TabletLocations(ActorRef<Master.Command> master, ActorSystem<?> system, Duration askTimeout, int most,
      java.util.function.Function<TabletPosition, TabletInfo> fallback) {
    this.master = master;
    this.system = system;
    this.askTimeout = askTimeout;
    this.lookupTimeout = fallback != null && askTimeout.compareTo(LOOKUP_TIMEOUT) > 0 ? LOOKUP_TIMEOUT : askTimeout;
    this.most = Math.max(PREFETCH, most);
    this.fallback = fallback;
  }

  /** The cached tablet at {@code at}, or null when none is cached. */
  public TabletInfo cached(TabletPosition at) {
    Ranges r = tables.get(at.table());
    if (r == null) {
      return null;
    }
    Map.Entry<byte[], Entry> e = at.before()
        ? (at.row().length == 0 ? r.byStart.lastEntry() : r.byStart.lowerEntry(at.row()))
        : r.byStart.floorEntry(at.row());
    if (e == null || !at.heldBy(e.getValue().tablet())) {
      return null;
    }
    r.usedAt = System.nanoTime();
    return e.getValue().tablet();
  }

  /** The cached tablet holding {@code row}, or null. */
  public TabletInfo cached(String table, byte[] row) {
    return cached(TabletPosition.of(table, row));
  }

  /**
   * The tablet at {@code at}: cached, or looked up from the master, or, when the master does not
   * answer, the fallback's. Fails NOT_FOUND for a table the master does not know, MOVED if there
   * is no tablet there (a table being made), or as the lookup failed.
   */
  public CompletionStage<TabletInfo> locate(TabletPosition at) {
    TabletInfo hit = cached(at);
    if (hit != null) {
      return CompletableFuture.completedFuture(hit); // the common case: no stage more
    }
    return lookedUp(at).exceptionally(err -> {
      TabletInfo t = fallback == null || Refusal.is(err, ErrorCode.NOT_FOUND) || Refusal.is(err, ErrorCode.MOVED)
          ? null : fallback.apply(at);
      if (t == null || !at.heldBy(t)) { // a share holds the node's tablets only: its last is not the table's
        throw err instanceof java.util.concurrent.CompletionException c ? c
            : new java.util.concurrent.CompletionException(err);
      }
      return t;
    });
  }

  private CompletionStage<TabletInfo> lookedUp(TabletPosition at) {
    TabletInfo t = cached(at);
    if (t != null) {
      return CompletableFuture.completedFuture(t);
    }
    Ranges r = tables.computeIfAbsent(at.table(), k -> new Ranges());
    CompletableFuture<Void> mine = new CompletableFuture<>();
    CompletableFuture<Void> under = r.looking.compareAndExchange(null, mine);
    if (under != null) {
      // another request is looking this table up: look again once it has, or fail as it did
      // (a master that does not answer would otherwise make each waiter wait its turn in vain)
      return under.thenCompose(x -> lookedUp(at));
    }
    return lookUp(at.table(), at.row(), at.before(), PREFETCH).whenComplete((x, err) -> {
      r.looking.set(null);
      if (err != null) {
        mine.completeExceptionally(err);
      } else {
        mine.complete(null);
      }
    }).thenApply(found -> {
      for (TabletInfo f : found) {
        if (at.heldBy(f)) {
          return f;
        }
      }
      throw Refusal.of(ErrorCode.MOVED, "no tablet of table " + at.table() + " holds the row").exception();
    });
  }

  /**
   * Completes once every row of {@code rows} has a cached tablet, or could not be looked up
   * (those rows are then missed, and go the per-row way): rows are looked up in order, each
   * lookup naming up to {@link TabletLookup#MOST_TABLETS} tablets from the first row missing,
   * so a batch touching thousands of tablets costs a few lookups. Never fails.
   */
  public CompletionStage<Void> cover(String table, List<byte[]> rows) {
    List<byte[]> missing = new ArrayList<>();
    for (byte[] row : rows) {
      if (!holdsWithOwner(table, row)) {
        missing.add(row);
      }
    }
    if (missing.isEmpty()) {
      return CompletableFuture.completedFuture(null);
    }
    missing.sort(ROWS);
    // a few runs of the sorted rows side by side: sparse rows of a large table may need a lookup each
    int runs = Math.min(COVER_AT_ONCE, missing.size());
    CompletableFuture<?>[] each = new CompletableFuture<?>[runs];
    for (int k = 0; k < runs; k++) {
      List<byte[]> run = missing.subList(k * missing.size() / runs, (k + 1) * missing.size() / runs);
      each[k] = coverSorted(table, run, 0).toCompletableFuture();
    }
    return CompletableFuture.allOf(each);
  }

  private CompletionStage<Void> coverSorted(String table, List<byte[]> rows, int from) {
    int i = from;
    while (i < rows.size() && holdsWithOwner(table, rows.get(i))) {
      i++;
    }
    if (i == rows.size()) {
      return CompletableFuture.completedFuture(null);
    }
    int next = i;
    return lookUp(table, rows.get(next), false, TabletLookup.MOST_TABLETS).handle((found, err) -> {
      if (err != null || found.isEmpty() || cached(table, rows.get(next)) == null) {
        return CompletableFuture.<Void>completedFuture(null); // the rest go the per-row way
      }
      // the rows the answer covers are done, whatever it left of their owners (those go through sharding)
      int after = next + 1;
      byte[] end = found.get(found.size() - 1).endRow();
      while (after < rows.size() && (end.length == 0 || ByteArrays.compare(rows.get(after), end) < 0)) {
        after++;
      }
      return coverSorted(table, rows, after);
    }).thenCompose(x -> x);
  }

  /** Whether the tablet holding {@code row} is cached with its owner known (a batch sends by owner). */
  public boolean holdsWithOwner(String table, byte[] row) {
    TabletInfo t = cached(table, row);
    return t != null && ownerOf(t) != null;
  }

  /**
   * The tablets of {@code table} from {@code row} on (at most {@code count}), as the master has
   * them now, bypassing the cache (and cached afterwards): for a client's own lookups and a
   * route it names. NOT_FOUND for an unknown table.
   */
  public CompletionStage<TabletLookup.Located> fresh(String table, byte[] row, int count) {
    return askAndTake(table, row, false, count, askTimeout);
  }

  /**
   * Every tablet of {@code table} in row order, looked up from the master page after page (not
   * cached: a whole-table request would push out what requests use). NOT_FOUND for an unknown
   * table. Pages may come from different versions of the directory: each starts at the row the
   * one before ended, so the list covers the table; a tablet that split or merged between
   * pages answers as moved when asked.
   */
  public CompletionStage<List<TabletInfo>> every(String table) {
    return everyFrom(table, ByteArrays.EMPTY, new ArrayList<>());
  }

  private CompletionStage<List<TabletInfo>> everyFrom(String table, byte[] from, List<TabletInfo> into) {
    return ask(table, from, false, TabletLookup.MOST_TABLETS, askTimeout).thenCompose(a -> {
      if (a.tablets().isEmpty()) {
        throw Refusal.of(ErrorCode.MOVED, "no tablet of table " + table + " holds the row").exception();
      }
      into.addAll(a.tablets());
      byte[] end = a.tablets().get(a.tablets().size() - 1).endRow();
      return end.length == 0 ? CompletableFuture.completedFuture(into) : everyFrom(table, end, into);
    });
  }

  /** Drops the entry of tablet {@code t}, which answered that a row it should hold moved. */
  public void forget(TabletInfo t) {
    Ranges r = tables.get(t.table());
    if (r == null) {
      return;
    }
    synchronized (r) {
      Entry e = r.byStart.get(t.startRow());
      if (e != null && e.tablet().id().equals(t.id())) {
        remove(r, t.startRow());
      }
    }
  }

  /** Drops every entry of {@code table} (it was deleted). */
  public void forgetTable(String table) {
    Ranges r = tables.remove(table);
    if (r != null) {
      synchronized (r) {
        clear(r);
      }
    }
  }

  /**
   * The owner of tablet {@code t} by its cached entry: a node's name, "" for none, or null when
   * {@code t} is not cached or its owner is not known. A stale owner costs a request one more
   * hop (that node reaches the tablet through sharding), never a wrong answer.
   */
  public String ownerOf(TabletInfo t) {
    Entry e = entryOf(t);
    return e == null ? null : e.owner();
  }

  /** Whether the cached owner of {@code t} was learned (by a lookup or a change) within {@code age}. */
  public boolean ownerKnownWithin(TabletInfo t, Duration age) {
    Entry e = entryOf(t);
    return e != null && e.owner() != null && System.nanoTime() - e.ownerNanos() <= age.toNanos();
  }

  /** The entry of {@code t}, or null. */
  private Entry entryOf(TabletInfo t) {
    Ranges r = tables.get(t.table());
    Entry e = r == null ? null : r.byStart.get(t.startRow());
    return e != null && e.tablet().id().equals(t.id()) ? e : null;
  }

  /**
   * Takes what the master's changes did to tablets ({@link
   * io.tabula.actors.master.DirectoryCache#addTabletListener}): the owners of cached tablets
   * follow them (or become unknown, when the changes are not known), and the entries of tablets
   * they removed (split, merged) go, so that no request meets their moved answer.
   */
  public void changed(io.tabula.actors.master.DirectoryCache.TabletChanges c) {
    if (c.wentBack()) {
      // The master's versions went back: what was learnt belongs to a history it no longer has.
      tables.keySet().forEach(this::forgetTable);
      changesTaken.set(c.version());
      return;
    }
    if (c.unknown() || !c.owners().isEmpty()) {
      changesTaken.accumulateAndGet(c.version(), Math::max); // (a split's or merge's alone changes no owner)
    }
    if (c.unknown()) {
      tables.values().forEach(r -> {
        synchronized (r) {
          r.byStart.replaceAll((start, e) -> e.withOwner(null, Math.max(e.ownerVersion(), c.version())));
        }
      });
    }
    c.owners().forEach((id, owner) -> setOwner(id, owner, c.version(), null));
    for (String id : c.gone()) {
      TabletInfo t = ids.get(id);
      if (t != null) {
        forget(t);
      }
    }
  }

  /**
   * Forgets that node {@code owner} owns {@code t} (it answered that it does not serve it), unless
   * a change named another owner meanwhile: its next lookup says.
   */
  public void forgetOwner(TabletInfo t, String owner) {
    setOwner(t.id(), null, -1, owner);
  }

  /**
   * Sets the owner of cached tablet {@code id}: as version {@code version} had it unless a newer
   * is known, or ({@code version} -1) in place of owner {@code was} only.
   */
  private void setOwner(String id, String owner, long version, String was) {
    TabletInfo t = ids.get(id);
    Ranges r = t == null ? null : tables.get(t.table());
    if (r == null) {
      return;
    }
    synchronized (r) {
      Entry e = r.byStart.get(t.startRow());
      boolean replace = version == -1 ? java.util.Objects.equals(e == null ? null : e.owner(), was)
          : e != null && version >= e.ownerVersion();
      if (e != null && e.tablet() == t && replace) {
        r.byStart.put(t.startRow(), e.withOwner(owner, version == -1 ? e.ownerVersion() : version));
      }
    }
  }

  /** Adds {@code e}, in place of an entry at its start row if any. Under r's lock. */
  private void put(Ranges r, Entry e) {
    Entry old = r.byStart.put(e.tablet().startRow(), e);
    if (old == null) {
      held.incrementAndGet();
    } else {
      unindex(old);
    }
    ids.put(e.tablet().id(), e.tablet());
  }

  /** Removes the entry at {@code start}, if any. Under r's lock. */
  private void remove(Ranges r, byte[] start) {
    Entry old = r.byStart.remove(start);
    if (old != null) {
      held.decrementAndGet();
      unindex(old);
    }
  }

  /** Removes every entry of {@code r}. Under r's lock. */
  private void clear(Ranges r) {
    r.byStart.values().forEach(this::unindex);
    held.addAndGet(-r.byStart.size());
    r.byStart.clear();
  }

  /**
   * Takes {@code e}'s tablet out of the index by id, if the index still names that very object
   * (a table dropped and looked up again meanwhile may have indexed an equal one of its own).
   */
  private void unindex(Entry e) {
    ids.computeIfPresent(e.tablet().id(), (id, t) -> t == e.tablet() ? null : t);
  }

  /**
   * Drops the tables {@code d} (the node's copy of the directory, newer than before) no longer
   * has, or has as another table made under the name. A table made after the copy's version and
   * already looked up is dropped too, and looked up again at its next request.
   */
  public void keepTablesOf(io.tabula.actors.master.Directory d) {
    tables.forEach((table, r) -> {
      io.tabula.actors.master.TableInfo info = d.table(table);
      if (info == null || (r.created != -1 && info.createdMicros() != r.created)) {
        forgetTable(table);
      }
    });
  }

  /** How many lookups this node asked the master for since it started. */
  public long lookups() {
    return lookups.get();
  }

  /** How many tablets are cached. */
  public int held() {
    return held.get();
  }

  /** One lookup of a request or a batch: asks the master, caches what it answers, completes with it. */
  private CompletionStage<List<TabletInfo>> lookUp(String table, byte[] row, boolean before, int count) {
    return askAndTake(table, row, before, count, lookupTimeout).thenApply(TabletLookup.Located::tablets);
  }

  private CompletionStage<TabletLookup.Located> askAndTake(String table, byte[] row, boolean before, int count,
      Duration timeout) {
    return ask(table, row, before, count, timeout).thenApply(a -> {
      take(table, a);
      return a;
    });
  }

  private CompletionStage<TabletLookup.Located> ask(String table, byte[] row, boolean before, int count,
      Duration timeout) {
    lookups.incrementAndGet();
    CompletionStage<TabletLookup.Located> asked;
    try {
      asked = Stages.direct(AskPattern.<Master.Command, TabletLookup.Located>ask(master,
          r -> new Master.Locate(table, row, before, count, r), timeout, system.scheduler()));
    } catch (RuntimeException e) { // the scheduler stopped (the node is shutting down)
      return CompletableFuture.failedFuture(e);
    }
    return asked.thenApply(a -> {
          if (!a.tableKnown()) {
            forgetTable(table);
            throw Refusal.of(ErrorCode.NOT_FOUND, "table " + table + " not found").exception();
          }
          return a;
        });
  }

  /**
   * Caches answer {@code a}: each tablet it names replaces the entries it overlaps, unless one
   * of them is from a newer directory (then that tablet is left out). Then keeps the bound.
   */
  private void take(String table, TabletLookup.Located a) {
    if (a.tablets().isEmpty()) {
      return;
    }
    while (true) {
      Ranges r = tables.computeIfAbsent(table, k -> new Ranges());
      synchronized (r) {
        if (tables.get(table) != r) {
          continue; // dropped meanwhile (forgetTable): what went into it would be held nowhere, yet counted
        }
        if (r.created != a.tableCreated()) {
          if (a.version() < r.newest) {
            break; // an answer of the table before the one held, late
          }
          // the first answer, or one of a table made again under the name: what is held is of another
          clear(r);
          r.created = a.tableCreated();
        }
        r.newest = Math.max(r.newest, a.version());
        for (int k = 0; k < a.tablets().size(); k++) {
          TabletInfo t = a.tablets().get(k);
          List<byte[]> overlapped = overlapping(r, t);
          boolean newerThere = false;
          for (byte[] start : overlapped) {
            newerThere |= r.byStart.get(start).version() > a.version();
          }
          if (newerThere) {
            continue;
          }
          // an owner a later change gave this very tablet stays
          Entry same = r.byStart.get(t.startRow());
          Entry taken = same != null && same.tablet().id().equals(t.id()) && same.ownerVersion() > a.version()
              ? new Entry(t, a.version(), same.owner(), same.ownerVersion(), same.ownerNanos())
              : new Entry(t, a.version(), a.version() < changesTaken.get() ? null : a.owners().get(k), a.version(),
                  System.nanoTime());
          overlapped.forEach(start -> remove(r, start));
          put(r, taken);
        }
        r.usedAt = System.nanoTime();
        break;
      }
    }
    if (held.get() > most) {
      shrink(table, a.tablets());
    }
  }

  /** The start rows of the entries of {@code r} whose ranges overlap {@code t}'s. Under r's lock. */
  private static List<byte[]> overlapping(Ranges r, TabletInfo t) {
    List<byte[]> out = new ArrayList<>();
    Map.Entry<byte[], Entry> before = r.byStart.lowerEntry(t.startRow());
    if (before != null) {
      byte[] end = before.getValue().tablet().endRow();
      if (end.length == 0 || ByteArrays.compare(end, t.startRow()) > 0) {
        out.add(before.getKey());
      }
    }
    Map<byte[], Entry> from = t.endRow().length == 0 ? r.byStart.tailMap(t.startRow(), true)
        : r.byStart.subMap(t.startRow(), true, t.endRow(), false);
    out.addAll(from.keySet());
    return out;
  }

  /**
   * Back under three quarters of the bound: the tables least recently used other than
   * {@code table} are dropped whole; if {@code table} alone is over, it keeps only {@code kept}.
   */
  private void shrink(String table, List<TabletInfo> kept) {
    int target = most / 4 * 3;
    List<Map.Entry<String, Ranges>> byUse = new ArrayList<>(tables.entrySet());
    byUse.sort(Comparator.comparingLong(e -> e.getValue().usedAt));
    for (Map.Entry<String, Ranges> e : byUse) {
      if (held.get() <= target) {
        return;
      }
      if (!e.getKey().equals(table)) {
        Ranges r = e.getValue();
        synchronized (r) {
          clear(r);
        }
      }
    }
    Ranges r = tables.get(table);
    if (r == null || held.get() <= target) {
      return;
    }
    synchronized (r) {
      Map<byte[], Entry> keep = new java.util.HashMap<>();
      for (TabletInfo t : kept) {
        Entry e = r.byStart.get(t.startRow());
        if (e != null && e.tablet().id().equals(t.id())) {
          keep.put(t.startRow(), e);
        }
      }
      clear(r);
      keep.values().forEach(e -> put(r, e));
    }
  }
}
