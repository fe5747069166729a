package io.tabula.actors.master;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Which tablets are hot enough to split (as Cloud Bigtable splits a busy tablet, not only a
 * large one): with at least two Up nodes, a serving tablet whose reads and writes have stayed,
 * for {@code hotFor}, at least {@code minOps} per second and more than {@code share} of a
 * node's fair part of the cluster's load (the total over the Up nodes). Splitting it, at the
 * row that halves its sampled load (the tablet picks it), gives the balancer halves it can
 * move apart; on one node a split would move nothing. A tablet that is still there after it
 * was asked (one row carries most of its load, so it did not split) is asked again only after
 * {@value #ASK_AGAIN_AFTER} times {@code hotFor}. At most {@value #MAX_PER_TICK} are asked per
 * tick, hottest first. Owned by the master's thread.
 */
final class HotSplits {
  static final int MAX_PER_TICK = 2;
  static final int ASK_AGAIN_AFTER = 5;

  private final double minOps;
  private final double share;
  private final long hotForNanos;
  /** Since when each hot tablet has been hot. */
  private final Map<String, Long> hotSince = new HashMap<>();
  /** When each tablet was last asked to split. */
  private final Map<String, Long> asked = new HashMap<>();

  HotSplits(double minOps, double share, long hotForNanos) {
    this.minOps = minOps;
    this.share = share;
    this.hotForNanos = hotForNanos;
  }

  /**
   * The tablets to ask to split now.
   *
   * @param load recent load by tablet id: {ops per second, ...}
   * @param upNodes how many nodes serve tablets
   */
  List<String> due(Directory d, Map<String, double[]> load, int upNodes, long now) {
    hotSince.keySet().removeIf(id -> d.tablet(id) == null);
    asked.keySet().removeIf(id -> d.tablet(id) == null);
    double total = 0;
    for (double[] l : load.values()) {
      total += l[0];
    }
    if (upNodes < 2) {
      hotSince.clear();
      return List.of();
    }
    double threshold = Math.max(minOps, share * total / upNodes);
    List<String> out = new ArrayList<>();
    for (Map.Entry<String, double[]> e : load.entrySet()) {
      String id = e.getKey();
      TabletPlacement p = d.placementOf(id);
      boolean hot = e.getValue()[0] > threshold && d.tablet(id) != null && p.assigned()
          && p.state() == TabletPlacement.State.SERVING;
      if (!hot) {
        hotSince.remove(id);
        continue;
      }
      long since = hotSince.computeIfAbsent(id, k -> now);
      Long last = asked.get(id);
      if (now - since >= hotForNanos && (last == null || now - last >= ASK_AGAIN_AFTER * hotForNanos)) {
        out.add(id);
      }
    }
    out.sort(Comparator.comparingDouble(id -> -load.get(id)[0]));
    List<String> chosen = out.subList(0, Math.min(MAX_PER_TICK, out.size()));
    chosen.forEach(id -> asked.put(id, now));
    return new ArrayList<>(chosen);
  }
}
