package io.tabula.actors.master;

import io.tabula.protocol.kryo.KryoSerializable;
import java.util.Collection;
import java.util.List;
import java.util.TreeSet;

/**
 * Where the master has placed a tablet (paper §5.2): its owner node, whether it is moving,
 * and the commit-log folders that may hold writes of it not yet in its SSTables. Kept in the
 * {@link Directory} beside the tablet's {@link TabletInfo}, whose stored form never changes.
 * Immutable.
 *
 * @param owner the node (by name) that serves it, or where Cluster Sharding is to place it
 *     now; empty while unassigned
 * @param state {@link State#PREPARING}: the owner compacts it for a move to {@code peer};
 *     {@link State#MOVING}: it is being handed from {@code peer} to the owner;
 *     {@link State#MERGING}: it is being merged into tablet {@code peer}
 * @param peer the other end of a move; empty when serving
 * @param logs the log folders (names under {@code logs/}) of every node incarnation that
 *     opened the tablet and has not closed it cleanly: whoever opens it next replays its
 *     records from these past its redo point. Sorted.
 */
public record TabletPlacement(String owner, State state, String peer, List<String> logs) implements KryoSerializable {
  /** A tablet's movement. The names are shown by Management HTTP; the stored form is Kryo's enum ordinal. */
  public enum State { SERVING, PREPARING, MOVING, MERGING }

  public static final TabletPlacement UNASSIGNED = new TabletPlacement("", State.SERVING, "", List.of());

  public TabletPlacement {
    logs = List.copyOf(new TreeSet<>(logs));
  }

  public boolean assigned() {
    return !owner.isEmpty();
  }

  /**
   * Serving and named by no log: open nowhere (never opened, or closed cleanly), or opening and
   * not recorded yet, an open the master then refuses if the tablet was placed elsewhere
   * meanwhile. Such a tablet goes to another node by a change of its owner alone, without a
   * move's steps (docs/cluster.md, "Tablets open when first asked").
   */
  public boolean closed() {
    return state == State.SERVING && logs.isEmpty();
  }

  /**
   * The nodes it is placed on: its owner, and the other end of a move (not the child of a
   * merge, which {@code peer} names then); none while unassigned. A node's share of the
   * directory is the tablets whose placement names it ({@link Directory#share}).
   */
  public List<String> nodes() {
    boolean moving = (state == State.PREPARING || state == State.MOVING) && !peer.isEmpty() && !peer.equals(owner);
    return owner.isEmpty() ? (moving ? List.of(peer) : List.of()) : moving ? List.of(owner, peer) : List.of(owner);
  }

  /** Serving at {@code node}, with the same logs. */
  TabletPlacement servedBy(String node) {
    return new TabletPlacement(node, State.SERVING, "", logs);
  }

  /** Compacting at its owner before it moves to {@code to}. */
  TabletPlacement preparing(String to) {
    return new TabletPlacement(owner, State.PREPARING, to, logs);
  }

  /** Being handed from its owner to {@code to}, which becomes the owner. */
  TabletPlacement handedTo(String to) {
    return new TabletPlacement(to, State.MOVING, owner, logs);
  }

  /** Being merged into tablet {@code childId}. */
  TabletPlacement merging(String childId) {
    return new TabletPlacement(owner, State.MERGING, childId, logs);
  }

  /** No longer moving. */
  TabletPlacement settled() {
    return new TabletPlacement(owner, State.SERVING, "", logs);
  }

  /** With {@code log} added and {@code recovered} removed. */
  TabletPlacement withLogs(String log, Collection<String> recovered) {
    TreeSet<String> l = new TreeSet<>(logs);
    l.removeAll(recovered);
    if (!log.isEmpty()) {
      l.add(log);
    }
    return new TabletPlacement(owner, state, peer, List.copyOf(l));
  }
}
