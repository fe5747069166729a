package io.tabula.actors.master;

import java.util.List;
import org.pcollections.HashPMap;
import org.pcollections.HashTreePSet;
import org.pcollections.MapPSet;

/**
 * The indexes over the placements while a change is made: each tablet's placement taken out
 * ({@link #remove}) and put in ({@link #add}) as it changes. A null placement is none (the
 * tablet is unassigned). Used by one thread, then handed to the new directory.
 */
final class DirectoryIndexes {
  HashPMap<String, MapPSet<String>> byOwner;
  MapPSet<String> unsettled;
  HashPMap<String, Integer> logUses;

  DirectoryIndexes(HashPMap<String, MapPSet<String>> byOwner, MapPSet<String> unsettled,
      HashPMap<String, Integer> logUses) {
    this.byOwner = byOwner;
    this.unsettled = unsettled;
    this.logUses = logUses;
  }

  void add(String id, TabletPlacement p) {
    String owner = p == null ? "" : p.owner();
    byOwner = byOwner.plus(owner, byOwner.getOrDefault(owner, HashTreePSet.empty()).plus(id));
    if (p == null) {
      return;
    }
    if (p.state() != TabletPlacement.State.SERVING) {
      unsettled = unsettled.plus(id);
    }
    for (String log : p.logs()) {
      logUses = logUses.plus(log, logUses.getOrDefault(log, 0) + 1);
    }
  }

  /**
   * As {@link #remove} then {@link #add}, touching only the indexes that change: a tablet
   * whose logs change on its owner keeps its owner's set (the same object), so a node can tell
   * cheaply that what it owns did not change.
   */
  void replace(String id, TabletPlacement was, TabletPlacement now) {
    String owner = was == null ? "" : was.owner();
    if (!owner.equals(now.owner())) {
      remove(id, was);
      add(id, now);
      return;
    }
    boolean wasUnsettled = was != null && was.state() != TabletPlacement.State.SERVING;
    if (wasUnsettled != (now.state() != TabletPlacement.State.SERVING)) {
      unsettled = wasUnsettled ? unsettled.minus(id) : unsettled.plus(id);
    }
    List<String> before = was == null ? List.of() : was.logs();
    if (!before.equals(now.logs())) {
      for (String log : before) {
        int uses = logUses.getOrDefault(log, 0) - 1;
        logUses = uses <= 0 ? logUses.minus(log) : logUses.plus(log, uses);
      }
      for (String log : now.logs()) {
        logUses = logUses.plus(log, logUses.getOrDefault(log, 0) + 1);
      }
    }
  }

  void remove(String id, TabletPlacement p) {
    String owner = p == null ? "" : p.owner();
    MapPSet<String> ids = byOwner.get(owner);
    if (ids != null && ids.contains(id)) {
      MapPSet<String> left = ids.minus(id);
      byOwner = left.isEmpty() ? byOwner.minus(owner) : byOwner.plus(owner, left);
    }
    if (p == null) {
      return;
    }
    unsettled = unsettled.minus(id);
    for (String log : p.logs()) {
      int uses = logUses.getOrDefault(log, 0) - 1;
      logUses = uses <= 0 ? logUses.minus(log) : logUses.plus(log, uses);
    }
  }
}
