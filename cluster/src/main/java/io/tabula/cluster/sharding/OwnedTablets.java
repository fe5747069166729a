package io.tabula.cluster.sharding;

import io.tabula.actors.master.Directory;
import io.tabula.actors.master.TabletInfo;
import io.tabula.actors.master.TabletPlacement;
import io.tabula.actors.tablet.LocalTablets;
import io.tabula.actors.tablet.TabletActor;
import java.time.Duration;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Starts the actors of the tablets the master gave this node: Cluster Sharding starts an
 * entity only when a message reaches it, and a tablet must open (and replay what logs hold
 * of it) when it is placed, not when its first request comes. Whenever the directory
 * changes, and each {@code every} besides, every tablet this node owns but does not serve is
 * sent a {@link TabletActor.Wake}, at most once per {@code every}. Thread-safe.
 */
public final class OwnedTablets {
  private final String node;
  private final TabletShards tablets;
  private final LocalTablets local;
  private final long everyNanos;
  /** When each tablet was last woken (System.nanoTime). */
  private final ConcurrentHashMap<String, Long> woken = new ConcurrentHashMap<>();

  public OwnedTablets(String node, TabletShards tablets, LocalTablets local, Duration every) {
    this.node = node;
    this.tablets = tablets;
    this.local = local;
    this.everyNanos = every.toNanos();
  }

  /** Wakes the tablets of {@code d} this node owns and does not serve yet. */
  public void wake(Directory d) {
    long now = System.nanoTime();
    woken.keySet().removeIf(id -> d.tablet(id) == null);
    for (TabletInfo t : d.allTablets()) {
      if (!node.equals(d.ownerOf(t.id())) || local.serves(t.id())) {
        continue;
      }
      Long last = woken.get(t.id());
      if (last == null || now - last > everyNanos) {
        woken.put(t.id(), now);
        tablets.tablet(t.id()).tell(TabletActor.Wake.INSTANCE);
      }
    }
  }

  /**
   * Wakes the tablets moving to this node that it does not serve yet. Sharding starts an
   * entity only when a message reaches it, so a tablet handed over with no request waiting
   * would sit closed until the next {@link #wake}; called often, this bounds the gap. Only
   * moving tablets are looked at: few at a time.
   */
  public void wakeArriving(Directory d) {
    d.placement().forEach((id, p) -> {
      if (p.state() == TabletPlacement.State.MOVING && node.equals(p.owner()) && !local.serves(id)) {
        tablets.tablet(id).tell(TabletActor.Wake.INSTANCE);
      }
    });
  }

  /** How many tablets of {@code d} this node owns and serves, and how many it owns. */
  public int[] servedOfOwned(Directory d) {
    int owned = 0;
    int served = 0;
    for (TabletInfo t : d.allTablets()) {
      if (node.equals(d.ownerOf(t.id()))) {
        owned++;
        if (local.serves(t.id())) {
          served++;
        }
      }
    }
    return new int[] {served, owned};
  }
}
