package io.tabula.actors.tablet;

import io.tabula.actors.master.TabletPlacement;
import java.util.function.Consumer;
import org.apache.pekko.actor.typed.ActorRef;

/**
 * When a tablet's actor asks to stop because its tablet is idle (docs/cluster.md, "Tablets open
 * when first asked"): once every periodic check for {@code tabula.tablet.close-idle-after} found
 * the tablet quiet (nothing read or written, the same size and files), the directory has it
 * serving on this node and not moving, and the node may take another idle close
 * ({@link LocalTablets#closesIdle}), it hands its actor's reference to {@code stopWhenIdle}
 * (sharding's passivation), and the host then sends the actor a {@link TabletActor.HandOff}.
 * Owned by the tablet actor's thread.
 */
final class IdleClose {
  private final TabletNode node;
  private final String tabletId;
  private final ActorRef<TabletActor.Command> self;
  /** Asks the host to stop the actor; null: it never closes for being idle. */
  private final Consumer<ActorRef<TabletActor.Command>> stopWhenIdle;
  /** Since when (System.nanoTime) every check found the tablet quiet; 0 when the last did not. */
  private long idleSince;
  /** Whether the actor asked to stop (its hand-over is then an idle close). */
  private boolean asked;

  IdleClose(TabletNode node, String tabletId, ActorRef<TabletActor.Command> self,
      Consumer<ActorRef<TabletActor.Command>> stopWhenIdle) {
    this.node = node;
    this.tabletId = tabletId;
    this.self = self;
    this.stopWhenIdle = stopWhenIdle;
  }

  /**
   * After a periodic check that found the tablet {@code quiet} or not: whether the actor has
   * asked to stop, now or before (then it starts no split nor compaction, which its close would
   * wait for).
   */
  boolean afterCheck(boolean quiet) {
    if (asked) {
      return true;
    }
    long now = System.nanoTime();
    if (!quiet) {
      idleSince = 0;
      return false;
    }
    if (idleSince == 0) {
      idleSince = now;
    }
    java.time.Duration after = node.settings().closeIdleAfter();
    if (stopWhenIdle == null || after.isZero() || now - idleSince < after.toNanos()) {
      return false;
    }
    TabletPlacement p = node.directory().get().placementOf(tabletId);
    if (p == null || p.state() != TabletPlacement.State.SERVING || !p.owner().equals(node.name())
        || !node.local().closesIdle(tabletId)) {
      return false;
    }
    asked = true;
    stopWhenIdle.accept(self);
    return true;
  }

  /** Whether the actor asked to stop, idle. */
  boolean asked() {
    return asked;
  }
}
