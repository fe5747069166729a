package io.tabula.cluster.sharding;

import io.tabula.actors.master.Directory;
import io.tabula.actors.master.TabletPlacement;
import io.tabula.actors.tablet.LocalTablets;
import io.tabula.actors.tablet.TabletActor;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Starts the actors of the tablets the master gave this node that must open now: Cluster
 * Sharding starts an entity only when a message reaches it. A tablet whose placement names a
 * commit-log folder (a log may hold writes of it that its files lack: it was open, here or
 * on a node that died) must open when it is placed, to replay them and release the folder;
 * so must a tablet moving here, whose move ends only once it opens. Any other tablet (never
 * opened, or closed cleanly) opens at its first request (docs/cluster.md, "Tablets open when
 * first asked"), and so does one that closed here for being idle while its close travels to the
 * directory ({@link LocalTablets#closingIdle}). Whenever the directory changes, and each {@code every} besides, every tablet
 * this node owns, must open, and does not serve is sent a {@link TabletActor.Wake}, at most
 * once per {@code every}. Thread-safe.
 */
public final class OwnedTablets {
  private final String node;
  private final TabletShards tablets;
  private final LocalTablets local;
  private final long everyNanos;
  /** The most tablets woken and not serving yet at any time (see {@link #wake}). */
  static final int MAX_OPENING = 1000;
  /** The owned tablets not serving nor woken when last listed, to wake in turn. Guarded by this. */
  private final java.util.ArrayDeque<String> toWake = new java.util.ArrayDeque<>();
  /** The directory's set of this node's tablets that {@link #toWake} was listed from. Guarded by this. */
  private java.util.Set<String> listedFrom;
  /** When {@link #toWake} was listed (System.nanoTime). Guarded by this. */
  private long listedAt;
  /** When each tablet not serving yet was last woken (System.nanoTime). */
  private final ConcurrentHashMap<String, Long> woken = new ConcurrentHashMap<>();

  public OwnedTablets(String node, TabletShards tablets, LocalTablets local, Duration every) {
    this.node = node;
    this.tablets = tablets;
    this.local = local;
    this.everyNanos = every.toNanos();
  }

  /**
   * Wakes the tablets of {@code d} this node owns and does not serve yet, at most
   * {@value #MAX_OPENING} at a time: the rest wait for a later call (every directory change,
   * such as the master recording the opens of the tablets woken before, and every
   * {@code every}). Sharding's region keeps a buffer per tablet whose home it is still asking
   * for, and counts every buffered message afresh at each new one: 100,000 tablets woken at once
   * cost it minutes of CPU, and the node answered nothing meanwhile.
   */
  public synchronized void wake(Directory d) {
    long now = System.nanoTime();
    woken.keySet().removeIf(id -> d.tablet(id) == null || local.serves(id));
    int opening = 0;
    for (Map.Entry<String, Long> w : woken.entrySet()) {
      if (now - w.getValue() > everyNanos && node.equals(d.ownerOf(w.getKey())) && !local.closingIdle(w.getKey(), now)) {
        w.setValue(now); // woken long ago and still not serving: once more
        tablets.tablet(w.getKey()).tell(TabletActor.Wake.INSTANCE);
      }
      opening++;
    }
    if (opening > MAX_OPENING / 2) {
      return;
    }
    // The tablets still to wake, listed again only when what this node owns changed (the
    // directory keeps the same set then) or every `every` (a tablet that closed here unasked),
    // not at every change: listing reads every tablet of the node.
    java.util.Set<String> owned = d.tabletsOwnedBy(node);
    if (owned != listedFrom || now - listedAt > everyNanos) {
      local.forgetClosingIdle(now);
      toWake.clear();
      for (String id : owned) {
        if (mustOpen(d, id) && !local.serves(id) && !woken.containsKey(id) && !local.closingIdle(id, now)) {
          toWake.add(id);
        }
      }
      listedFrom = owned;
      listedAt = now;
    }
    while (opening < MAX_OPENING && !toWake.isEmpty()) {
      String id = toWake.poll();
      if (!owned.contains(id) || local.serves(id) || woken.containsKey(id) || local.closingIdle(id, now)) {
        continue;
      }
      woken.put(id, now);
      opening++;
      tablets.tablet(id).tell(TabletActor.Wake.INSTANCE);
    }
  }

  /**
   * Wakes the tablets moving to this node that it does not serve yet. Sharding starts an
   * entity only when a message reaches it, so a tablet handed over with no request waiting
   * would sit closed until the next {@link #wake}; called often, this bounds the gap. Only
   * moving tablets are looked at: few at a time.
   */
  public void wakeArriving(Directory d) {
    for (String id : d.unsettledTablets()) {
      TabletPlacement p = d.placementOf(id);
      if (p.state() == TabletPlacement.State.MOVING && node.equals(p.owner()) && !local.serves(id)) {
        tablets.tablet(id).tell(TabletActor.Wake.INSTANCE);
      }
    }
  }

  /**
   * Whether tablet {@code id} of {@code d} must open now rather than at its first request: its
   * placement names a log folder, or it is moving to its owner.
   */
  static boolean mustOpen(Directory d, String id) {
    TabletPlacement p = d.placementOf(id);
    return p != null && (!p.logs().isEmpty() || p.state() == TabletPlacement.State.MOVING);
  }

  /**
   * How many tablets of {@code d} this node owns, must open ({@link #mustOpen}) and serves, and
   * how many it owns and must open. A count is reused for up to a second at the same directory
   * version: a node of 100,000 tablets may be asked often ({@code /ready}), and a tablet that
   * opens changes the version.
   */
  public int[] servedOfOwned(Directory d) {
    Counted c = counted;
    long now = System.nanoTime();
    if (c != null && c.version == d.version() && now - c.at < 1_000_000_000L) {
      return new int[] {c.served, c.mustOpen};
    }
    java.util.Set<String> owned = d.tabletsOwnedBy(node);
    int served = 0;
    int mustOpen = 0;
    for (String id : owned) {
      // A tablet closing here, idle, is not counted while its close travels to the directory.
      if (mustOpen(d, id) && !local.closingIdle(id, now)) {
        mustOpen++;
        if (local.serves(id)) {
          served++;
        }
      }
    }
    counted = new Counted(d.version(), now, served, mustOpen);
    return new int[] {served, mustOpen};
  }

  /** A count of {@link #servedOfOwned} at a directory version, made at {@code at} (nanoTime). */
  private record Counted(long version, long at, int served, int mustOpen) {}

  /** The last count. */
  private volatile Counted counted;
}
