package io.tabula.actors.master;

import io.tabula.actors.Stages;
import java.io.ByteArrayOutputStream;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.javadsl.Adapter;
import org.apache.pekko.actor.typed.javadsl.AskPattern;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.actor.typed.pubsub.Topic;
import org.apache.pekko.serialization.SerializationExtension;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A node's copy of the master's {@link Directory}, kept up to date by the master's changes
 * ({@link DirectoryFeed}): each published change whose {@code from} is the copy's version is
 * applied to it; any other (a change missed, a new master, a change too large to publish)
 * makes the node ask the master for what it lacks ({@link #refresh}). Any thread may read it;
 * listeners hear of each newer version in order. Thread-safe: changes to the copy are made
 * under this object's lock.
 *
 * <p>The copy is checked against the master's: each change and each answer carries the digest
 * of the master's directory at its version ({@link Directory#digest}), and a copy at that
 * version with another digest (a bug: the same events made two different directories) is
 * logged as an error and replaced by the master's whole directory.
 *
 * <p>A node's copy holds only its share of the directory ({@link Directory#share}): every table,
 * and the tablets whose placement names the node. It applies the master's events as the master
 * does, after inserting the tablets they bring into its share (their state before the event
 * that brings them, which the change carries: {@link DirectoryFeed.Entering}), then drops those
 * that no longer name it; its digest is checked against its share's. A copy in the master's
 * own JVM holds the master's whole directory, given with each change, and is cut to its share
 * once changes come without it (the master moved). A cache made without a node's name holds
 * the whole directory, made from the events alone (tests, tools).
 *
 * <p>Checked too: that the master's versions never go back. A master recovers its directory
 * from its journal, which holds every change it published, so a new master starts at least
 * where the old one ended. A journal that lost changes it had acknowledged (restored from an
 * older copy, a database failing over to a replica that lacked its last commits) breaks that:
 * the copy would be newer than anything the master publishes, and would ignore every change
 * until the master's versions passed it. A copy that every change and heartbeat received for
 * {@link #BEHIND_FOR} found newer than the master's is logged as an error and replaced by the
 * master's whole directory, older as it is, and the tablet listeners start over.
 */
public final class DirectoryCache {
  private static final Logger LOG = LoggerFactory.getLogger(DirectoryCache.class);
  /** How long each ask of a catch-up the topic starts may take. */
  private static final Duration CATCH_UP_ASK = Duration.ofSeconds(10);
  /**
   * How long every change received must have been older than the copy before the master is
   * taken to have gone back: more than a heartbeat's interval, and than a change published
   * before an answer the copy took can take to arrive after it.
   */
  static final Duration BEHIND_FOR = Duration.ofSeconds(5);
  /** ...and how many such changes must have come in that time. */
  private static final int BEHIND_SEEN = 3;

  private final AtomicReference<Directory> current = new AtomicReference<>(Directory.EMPTY);
  /** The node whose share the copy holds; "" for the whole directory. */
  private final String node;
  /** Whether the copy held is a whole directory (the master's JVM), in a cache of a share. Guarded by this. */
  private boolean whole;
  /** The sum of the share's tablets the master last gave ({@link DirectoryFeed.Shares#sumOf}). Guarded by this. */
  private long shareSum;
  private final List<Consumer<Directory>> listeners = new CopyOnWriteArrayList<>();
  private final List<Consumer<TabletChanges>> tabletListeners = new CopyOnWriteArrayList<>();
  /** The master's own directory last given with a change (only in the master's JVM), or null. */
  private volatile Directory mastersLast;
  private final AtomicReference<CompletableFuture<Directory>> refreshing = new AtomicReference<>();
  /** Set when the copy differed from the master's: the next catch-up fetches the whole directory. Guarded by this. */
  private boolean diverged;
  /**
   * Cleared while the master's digests are wrong (a whole directory fetched from it did not
   * have the digest it gave: comparing would fetch it again and again); set again by a whole
   * directory whose digest is right. Guarded by this.
   */
  private boolean checking = true;
  /** How many copies differed from the master's, in all. */
  private final java.util.concurrent.atomic.AtomicLong divergences = new java.util.concurrent.atomic.AtomicLong();
  /** When a difference was last logged (nanoTime), and how many were not logged since. Guarded by this. */
  private long loggedAt = Long.MIN_VALUE;
  private long notLogged;
  /** Since when (nanoTime) every change received was older than the copy, and how many came. Guarded by this. */
  private long behindSince;
  private int behindSeen;
  /** Set when the master's versions went back: the next catch-up takes its whole directory, however old. Guarded by this. */
  private boolean wentBack;
  private static final long LOG_EVERY_NANOS = 60_000_000_000L;

  /** A cache of the whole directory, made from the master's events alone. */
  public DirectoryCache() {
    this("");
  }

  /** A cache of node {@code node}'s share of the directory ("": the whole directory). */
  public DirectoryCache(String node) {
    this.node = node;
  }

  /** The copy: node's share of the master's directory, or (on the master's node) the whole of it. */
  public Directory get() {
    return current.get();
  }

  /** Takes {@code d} if it is newer than the copy held, and tells the listeners. */
  public synchronized void offer(Directory d) {
    if (d.version() > current.get().version()) {
      current.set(d);
      listeners.forEach(l -> l.accept(d));
    }
  }

  /**
   * What the master's changes up to directory version {@code version} did to tablets, for a
   * node's cache of their locations: the owners they gave (by tablet id: a node's name, "" for
   * none), then the tablets they removed (a split's parent, a merge's two). {@code unknown}:
   * the copy took changes whose events it does not have (one too large to publish, a catch-up
   * with the whole directory), so any owner known before may be stale. {@code wentBack}: the
   * master's versions went back ({@link DirectoryCache}), so whatever was learnt at the
   * versions before is to be forgotten ({@code unknown} is then true too).
   */
  public record TabletChanges(long version, java.util.Map<String, String> owners, java.util.Set<String> gone,
      boolean unknown, boolean wentBack) {
    public TabletChanges(long version, java.util.Map<String, String> owners, java.util.Set<String> gone,
        boolean unknown) {
      this(version, owners, gone, unknown, false);
    }
  }

  /**
   * Adds a listener of what the master's changes do to tablets, told under this object's lock,
   * in the order of the changes.
   */
  public void addTabletListener(Consumer<TabletChanges> listener) {
    tabletListeners.add(listener);
  }

  /**
   * Tells the tablet listeners what {@code events}, which made version {@code to}, did to
   * tablets (null: not known). Under this object's lock.
   */
  private void tellTablets(List<Master.Event> events, long to) {
    tellTablets(events, to, false);
  }

  private void tellTablets(List<Master.Event> events, long to, boolean wentBack) {
    if (tabletListeners.isEmpty()) {
      return;
    }
    if (events == null || wentBack) {
      TabletChanges c = new TabletChanges(to, java.util.Map.of(), java.util.Set.of(), true, wentBack);
      tabletListeners.forEach(l -> l.accept(c));
      return;
    }
    java.util.Map<String, String> owners = new java.util.HashMap<>();
    java.util.Set<String> gone = new java.util.HashSet<>();
    for (Master.Event e : events) {
      if (e instanceof Master.TabletsAssigned x) {
        owners.putAll(x.owners());
      } else if (e instanceof Master.MoveHandedOver x) {
        owners.put(x.tabletId(), x.to());
      } else if (e instanceof Master.TabletSplit x) {
        gone.add(x.parentId());
      } else if (e instanceof Master.TabletsMerged x) {
        gone.add(x.leftId());
        gone.add(x.rightId());
      }
    }
    if (!owners.isEmpty() || !gone.isEmpty()) {
      TabletChanges c = new TabletChanges(to, owners, gone, false);
      tabletListeners.forEach(l -> l.accept(c));
    }
  }

  /**
   * Whether the copy held is the master's own directory: this node runs the master (views of the
   * whole directory are answered here, and forwarded here by the other nodes).
   */
  public boolean isMasters() {
    Directory d = current.get();
    return d != Directory.EMPTY && d == mastersLast;
  }

  public void addListener(Consumer<Directory> listener) {
    listeners.add(listener);
  }

  /** How many times this node's copy was found to differ from the master's directory. */
  public long divergences() {
    return divergences.get();
  }

  /**
   * The digest a copy made from a change must have: the master's whole directory's ({@code
   * wholeDigest}) in a cache of the whole; its share's, by {@code shares}, in a cache of a share
   * (0, not known, without them).
   */
  private synchronized long expected(long wholeDigest, DirectoryFeed.Shares shares) {
    if (node.isEmpty() || whole) {
      return wholeDigest;
    }
    return shares == null ? 0 : shares.tablesDigest() + shares.sumOf(node, shareSum);
  }

  /** Takes the share sum {@code shares} gives, once a copy made with it matched. */
  private synchronized void took(DirectoryFeed.Shares shares) {
    if (shares != null && !node.isEmpty()) {
      shareSum = shares.sumOf(node, shareSum);
    }
  }

  /**
   * Whether {@code copy} has the master's {@code digest} (0: not known, taken as a match);
   * if not, logs it (at most once a minute) and has the next catch-up fetch the whole directory.
   */
  private synchronized boolean matches(Directory copy, long digest, String how) {
    if (digest == 0 || !checking || copy.digest() == digest) {
      return true;
    }
    divergences.incrementAndGet();
    diverged = true;
    long now = System.nanoTime();
    if (loggedAt == Long.MIN_VALUE || now - loggedAt > LOG_EVERY_NANOS) {
      LOG.error("This node's copy of the directory at version {} ({}) has digest {}, the master's has {}: the"
          + " copy differs from the master's directory; fetching the whole directory ({} earlier differences not"
          + " logged)", copy.version(), how, Long.toHexString(copy.digest()), Long.toHexString(digest), notLogged);
      loggedAt = now;
      notLogged = 0;
    } else {
      notLogged++;
    }
    return false;
  }

  /**
   * Whether the copy held, at change {@code c}'s version, is the master's: its digest is the
   * master's whole directory's, or its share's. A whole copy in a cache of a share (the master
   * ran here, and no longer publishes its directory with its changes) is cut to its share first.
   */
  private synchronized boolean heldChecks(DirectoryFeed.Change c) {
    Directory held = current.get();
    if (held.version() != c.to()) {
      return true; // a catch-up took the copy past it meanwhile
    }
    if (!node.isEmpty() && whole) {
      if (!matches(held, c.digest(), "the master's whole directory, compared with its heartbeat")) {
        return false;
      }
      held = cut(held);
    }
    long expected = expected(c.digest(), c.shares());
    if (matches(held, expected, "compared with the master's change or heartbeat")) {
      took(c.shares());
      return true;
    }
    return false;
  }

  /**
   * Whether the master's versions went back, now that a change to version {@code to} came while
   * the copy is at {@code held}, newer: every change received for {@link #BEHIND_FOR} was older
   * than the copy (at least {@link #BEHIND_SEEN} of them). Logged as an error once each time.
   */
  synchronized boolean wentBack(long to, long held, long nowNanos) {
    if (behindSeen == 0) {
      behindSince = nowNanos;
    }
    behindSeen++;
    if (wentBack || behindSeen < BEHIND_SEEN || nowNanos - behindSince < BEHIND_FOR.toNanos()) {
      return false;
    }
    wentBack = true;
    LOG.error("The master's directory is at version {}, and this node's copy at {}, newer, for {} ms and {} changes: "
        + "the master's journal lost changes it had published (restored from an older copy, or a database that "
        + "failed over to a replica without its last commits); this node takes the master's directory, older as "
        + "it is", to, held, (nowNanos - behindSince) / 1_000_000, behindSeen);
    return true;
  }

  /** {@link #apply(long, List, DirectoryFeed.Shares, long, long, boolean)} without what shares need: a cache of the whole. */
  synchronized boolean apply(long from, List<Master.Event> events, long to, long digest) {
    return apply(from, events, null, to, digest, false);
  }

  /**
   * Applies {@code events} if the copy is at version {@code from}; true if the copy is at
   * {@code to} or newer afterwards. Events that do not make version {@code to}, or a directory
   * without the master's {@code digest} (either would be a bug), are not taken. A share inserts
   * the tablets entering it ({@code shares}) before the event that brings each. A whole copy in
   * a cache of a share (the master runs, or ran, in this JVM) takes them whole, unless they were
   * {@code published}: the master then publishes elsewhere, and the copy is cut to its share.
   */
  synchronized boolean apply(long from, List<Master.Event> events, DirectoryFeed.Shares shares, long to,
      long digest, boolean published) {
    Directory d = current.get();
    if (d.version() >= to) {
      return true;
    }
    if (d.version() != from || events == null || (!node.isEmpty() && !whole && shares == null)) {
      return false;
    }
    Directory next = whole && published ? cut(d) : d;
    boolean asShare = !node.isEmpty() && !whole;
    java.util.Map<Integer, List<DirectoryFeed.Entering>> entering = new java.util.HashMap<>();
    if (asShare) {
      for (DirectoryFeed.Entering en : shares.entering()) {
        if (en.node().equals(node)) {
          entering.computeIfAbsent(en.at(), k -> new java.util.ArrayList<>()).add(en);
        }
      }
    }
    for (int i = 0; i < events.size(); i++) {
      for (DirectoryFeed.Entering en : entering.getOrDefault(i, List.of())) {
        next = next.withShareTablet(en.tablet(), en.placement().equals(TabletPlacement.UNASSIGNED) ? null
            : en.placement());
      }
      next = DirectoryEvents.apply(next, events.get(i));
      if (asShare) {
        // after each event: a tablet that left the share, kept on, could meet one entering it
        next = next.keptShareOf(node);
      }
    }
    if (next.version() != to) {
      LOG.error("The master's changes from directory version {} made version {}, not {}: asking for the whole"
          + " directory", from, next.version(), to);
      diverged = true;
      return false;
    }
    if (!matches(next, expected(digest, shares), "made from the master's events")) {
      return false;
    }
    if (asShare) {
      took(shares);
    }
    offer(next);
    tellTablets(events, to);
    return true;
  }

  /**
   * The share of whole copy {@code d} (the master's, taken while the master ran in this JVM),
   * held from now on: changes come without the master's directory. Its sum is its own (the whole
   * it came from was checked against the master's).
   */
  private synchronized Directory cut(Directory d) {
    Directory share = d.share(node);
    whole = false;
    shareSum = share.shareSum(node);
    current.set(share);
    return share;
  }

  /**
   * Takes a change the master published: applied if it follows the copy held, else the node
   * asks the master for what it lacks.
   */
  void receive(DirectoryFeed.Change c, ActorRef<Master.Command> master, ActorSystem<?> system) {
    Directory held = current.get();
    if (c.to() < held.version()) {
      if (wentBack(c.to(), held.version(), System.nanoTime())) {
        refresh(master, system, CATCH_UP_ASK).whenComplete((d, err) -> {
          if (err != null) {
            LOG.warn("Could not take the master's directory (version {} held, {} published): {}",
                current.get().version(), c.to(), err.toString());
          }
        });
      }
      return;
    }
    synchronized (this) {
      behindSince = 0;
      behindSeen = 0;
    }
    Directory after = c.after();
    if (after == null && !node.isEmpty()) { // the master's own, if it runs here
      Directory own = PublishedHere.of(system).last();
      after = own != null && own.version() >= c.to() ? own : null;
    }
    if (c.to() == held.version() && after != null && after.version() == held.version()) {
      // The master's own directory, at the version held (taken from an answer first, or this
      // node's share of it): held from now on.
      synchronized (this) {
        if (current.compareAndSet(held, after)) {
          whole = !node.isEmpty();
        }
        mastersLast = after;
      }
      return;
    }
    if (c.to() == held.version() && after == null && heldChecks(c)) {
      return;
    }
    if (after != null) {
      synchronized (this) {
        long before = current.get().version();
        if (replaceWith(after, after.digest(), true)) {
          tellTablets(before == c.from() && after.version() == c.to() ? c.events() : null, after.version());
        }
        mastersLast = after;
      }
      return;
    }
    if (c.to() == held.version() || !apply(c.from(), c.events(), c.shares(), c.to(), c.digest(), true)) {
      refresh(master, system, CATCH_UP_ASK).whenComplete((d, err) -> {
        if (err != null) {
          LOG.warn("Could not catch up with the master's directory (version {} held, {} published): {}",
              current.get().version(), c.to(), err.toString());
        }
      });
    }
  }

  /**
   * Asks the master for what the copy lacks and applies it; completes with the copy held
   * afterwards (at least as new as the master's when it answered). Callers that ask while an
   * ask is under way share it: when a tablet splits, every request that meets it refreshes,
   * and one ask each kept the master's mailbox full while the split waited there to be recorded.
   * Each of the asks it makes (one, or one per chunk of a large answer) may take {@code timeout}.
   */
  public CompletionStage<Directory> refresh(ActorRef<Master.Command> master, ActorSystem<?> system,
      Duration timeout) {
    CompletableFuture<Directory> mine = new CompletableFuture<>();
    CompletableFuture<Directory> under = refreshing.compareAndExchange(null, mine);
    if (under != null) {
      return under;
    }
    long since;
    String as; // a whole copy (the master runs here) asks for the whole, a share for itself
    synchronized (this) {
      since = diverged || wentBack ? -1 : current.get().version();
      as = whole && isMasters() ? "" : node;
    }
    catchUp(master, system, timeout, since, as).whenComplete((d, err) -> {
      refreshing.set(null);
      if (err != null) {
        mine.completeExceptionally(err);
      } else {
        mine.complete(get());
      }
    });
    return mine;
  }

  private CompletableFuture<Directory> catchUp(ActorRef<Master.Command> master, ActorSystem<?> system,
      Duration timeout, long since, String as) {
    return Stages.direct(AskPattern.<Master.Command, DirectoryFeed.Changes>ask(master,
        r -> new Master.GetChanges(since, as, r), timeout, system.scheduler())).thenCompose(ch -> {
          if (ch.events() != null) {
            return apply(ch.from(), ch.events(), ch.shares(), ch.to(), ch.digest(), false)
                ? CompletableFuture.completedFuture(get()) : catchUp(master, system, timeout, retrySince(since), as);
          }
          return fetch(master, system, timeout, ch, 0, new ByteArrayOutputStream()).thenCompose(content -> {
            if (content instanceof Directory d) {
              take(d, ch.digest(), ch.shares(), as.isEmpty());
              return CompletableFuture.completedFuture(get());
            }
            if (content instanceof DirectoryFeed.Events e && apply(ch.from(), e.events(),
                new DirectoryFeed.Shares(e.entering(), ch.shares().tablesDigest(), ch.shares().sums(), true), ch.to(),
                ch.digest(), false)) {
              return CompletableFuture.completedFuture(get());
            }
            // the blob was gone, the copy moved meanwhile, or it differs from the master's
            return since == -1 ? CompletableFuture.failedFuture(new IllegalStateException(
                "the master's directory could not be fetched")) : catchUp(master, system, timeout, retrySince(since),
                as);
          });
        });
  }

  /**
   * Takes directory {@code d} the master answered with (its whole directory if {@code isWhole},
   * else this node's share of it), whose digest the master gave ({@code digest} for the whole,
   * {@code shares} for a share).
   */
  synchronized void take(Directory d, long digest, DirectoryFeed.Shares shares, boolean isWhole) {
    boolean back = wentBack;
    if (replaceWith(d, isWhole || node.isEmpty() ? digest : shares.tablesDigest() + shares.sumOf(node, 0), isWhole)) {
      if (!isWhole) {
        took(shares);
      }
      tellTablets(null, d.version(), back);
    }
  }

  /**
   * The version to ask from again after an answer to {@code since} could not be applied: the
   * copy's, if a pushed change moved it meanwhile (it needs only the events after it); -1, the
   * whole directory, if it did not move or it differs from the master's.
   */
  private synchronized long retrySince(long since) {
    long held = current.get().version();
    return diverged || wentBack || held == since ? -1 : held;
  }

  /**
   * Takes the master's directory {@code d} (its whole directory if {@code isWhole}, else this
   * node's share of it), even at the version held (the copy held differed from it). If {@code d}
   * does not have the digest the master gave for it, the master's digest is wrong, not the copy:
   * that is logged, and copies are no longer compared. True if the copy is {@code d} now.
   */
  private synchronized boolean replaceWith(Directory d, long digest, boolean isWhole) {
    if (digest != 0 && d.digest() != digest) {
      if (checking) {
        checking = false;
        LOG.error("The master's directory at version {} has digest {}, but the master gave {} for it: its digest is"
            + " kept wrong; this node compares its copy with the master's again after a whole directory whose"
            + " digest is right", d.version(), Long.toHexString(d.digest()), Long.toHexString(digest));
      }
    } else if (digest != 0) {
      checking = true; // a master whose digest is right (a new one, after a failover)
    }
    Directory held = current.get();
    boolean taken = d.version() > held.version() || (d.version() == held.version() && diverged) || wentBack;
    if (taken) {
      current.set(d);
      whole = isWhole && !node.isEmpty();
      listeners.forEach(l -> l.accept(d));
    }
    if (d.version() >= held.version() || wentBack) {
      diverged = false;
      wentBack = false;
      behindSince = 0;
      behindSeen = 0;
    }
    return taken;
  }

  /** The content of the blob {@code ch} names, fetched chunk by chunk from {@code index}; null if it is gone. */
  private CompletableFuture<Object> fetch(ActorRef<Master.Command> master, ActorSystem<?> system, Duration timeout,
      DirectoryFeed.Changes ch, int index, ByteArrayOutputStream into) {
    if (index == ch.chunks()) {
      return CompletableFuture.completedFuture(SerializationExtension.get(Adapter.toClassic(system))
          .deserialize(into.toByteArray(), ch.serializerId(), ch.manifest()).get());
    }
    return Stages.direct(AskPattern.<Master.Command, DirectoryFeed.Chunk>ask(master,
        r -> new Master.GetChunk(ch.key(), index, r), timeout, system.scheduler())).thenCompose(chunk -> {
          if (chunk.bytes() == null) {
            return CompletableFuture.completedFuture(null);
          }
          into.writeBytes(chunk.bytes());
          return fetch(master, system, timeout, ch, index + 1, into);
        });
  }

  /**
   * An actor that subscribes to the directory topic and feeds every change published into
   * {@code cache}, asking {@code master} for what the cache lacks.
   */
  public static Behavior<DirectoryFeed.Change> subscriber(DirectoryCache cache,
      ActorRef<Topic.Command<DirectoryFeed.Change>> topic, ActorRef<Master.Command> master) {
    return Behaviors.setup(ctx -> {
      topic.tell(Topic.subscribe(ctx.getSelf()));
      return Behaviors.receiveMessage(c -> {
        cache.receive(c, master, ctx.getSystem());
        return Behaviors.same();
      });
    });
  }
}
