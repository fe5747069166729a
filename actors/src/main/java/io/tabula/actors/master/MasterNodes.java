package io.tabula.actors.master;

import io.tabula.persistence.tablet.FileSweeper;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Supplier;

/**
 * The cluster as the master sees and acts on it: the nodes it may place tablets on, what it
 * asks of them (leave once drained, be fenced and downed once taken for dead), and the shared
 * storage's garbage it collects.
 */
@FunctionalInterface
public interface MasterNodes {
  /** No nodes: a master that places nothing (tests of the directory alone). */
  MasterNodes NONE = List::of;

  /** Every Tabula node in the cluster membership, any status. */
  List<ClusterNodes.NodeInfo> all();

  /** Asks {@code node} to leave the cluster (it has been drained). */
  default void leave(ClusterNodes.NodeInfo node) {}

  /** The name of the node this master runs on ("" when none). */
  default String self() {
    return "";
  }

  /**
   * Fences every commit-log folder of {@code node} (docs/fencing.md) but those named in
   * {@code spare} (the folders of live members of that name other than the one taken for dead:
   * a node started again is not fenced by a decision about its earlier life), off the caller's
   * thread; completes once the fences are durable.
   */
  default CompletionStage<Void> fence(String node, Set<String> spare) {
    return CompletableFuture.completedFuture(null);
  }

  /**
   * Fences the commit-log folders {@code folders} (names under {@code logs/}), off the caller's
   * thread; completes once the fences are durable.
   */
  default CompletionStage<Void> fenceLogs(java.util.Collection<String> folders) {
    return CompletableFuture.completedFuture(null);
  }

  /**
   * Whether {@code node} holds tablet {@code tabletId} open now, as that node answers; fails if
   * it does not answer in time. The master asks before the tablet opens elsewhere while the
   * node's log is named in the tablet's placement and it reported no close.
   */
  default CompletionStage<Boolean> holds(ClusterNodes.NodeInfo node, String tabletId) {
    return CompletableFuture.completedFuture(true);
  }

  /**
   * Whether the node this master runs on holds the master lease now, by what it knows without
   * I/O: a master that lost it answers nothing that lets a tablet open.
   */
  default boolean holdsLease() {
    return true;
  }

  /** Downs {@code node}: the cluster takes it for dead, and it is removed from the membership. */
  default void down(ClusterNodes.NodeInfo node) {}

  /**
   * Names of nodes this node saw downed or removed from the membership since it started, and
   * that have no member now (none started again under that name): dead, or stopped by their
   * own side. Empty where nothing is watched.
   */
  default Set<String> gone() {
    return Set.of();
  }

  /**
   * Runs one mark-and-sweep of the SSTables ({@link FileSweeper}) for this master, whose sweeps
   * remember {@code marks}, off the caller's thread: {@code tablets} gives each table of the
   * master's directory, as it is when asked, to its tablets' ids (the sweep asks at its start and
   * before each batch of deletions). It deletes only while this node is still the master.
   * Completes with what it did, or with null where there is no storage to sweep.
   */
  default CompletionStage<FileSweeper.Result> sweepFiles(FileSweeper.Marks marks,
      Supplier<Map<String, Set<String>>> tablets) {
    return CompletableFuture.completedFuture(null);
  }
}
