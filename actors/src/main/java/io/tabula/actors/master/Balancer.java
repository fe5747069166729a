package io.tabula.actors.master;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Which tablets to move so the nodes carry even shares (paper §5.2; HBase's complaint that a
 * balancer counting regions "doesn't care about balancing actual load" taken to heart). A
 * tablet weighs 1 plus its recent load (reads and writes per second) over the mean load of
 * the tablets. First counts: while two nodes' counts differ by two or more, the coldest
 * movable tablet of the fullest goes to the emptiest. Then load: a node heavier than the
 * lightest (and with more tablets, so counts stay within one) gives it the tablet that
 * narrows the gap most, if by more than half a mean tablet. Pure: the master records what
 * it chooses.
 */
final class Balancer {
  /** A move to make. */
  record Move(String tabletId, String from, String to) {}

  private Balancer() {}

  /**
   * Up to {@code budget} moves among {@code targets} (nodes that may receive and give
   * tablets), never of a tablet in {@code frozen} (moving, or moved lately).
   *
   * @param load recent reads and writes per second, by tablet id (absent: none)
   */
  static List<Move> plan(Directory d, List<String> targets, Map<String, Double> load, Set<String> frozen,
      int budget) {
    List<Move> out = new ArrayList<>();
    if (targets.size() < 2 || budget <= 0) {
      return out;
    }
    double mean = load.values().stream().mapToDouble(Double::doubleValue).average().orElse(0);
    Map<String, Double> weight = new HashMap<>();
    Map<String, List<String>> owned = new HashMap<>();
    targets.forEach(n -> {
      weight.put(n, 0.0);
      owned.put(n, new ArrayList<>());
    });
    Map<String, Double> tabletWeight = new HashMap<>();
    for (TabletInfo t : d.allTablets()) {
      String owner = d.ownerOf(t.id());
      if (!weight.containsKey(owner)) {
        continue;
      }
      double w = 1 + (mean > 0 ? load.getOrDefault(t.id(), 0.0) / mean : 0);
      tabletWeight.put(t.id(), w);
      weight.merge(owner, w, Double::sum);
      owned.get(owner).add(t.id());
    }
    Map<String, Double> ops = new HashMap<>();
    tabletWeight.forEach((id, w) -> ops.put(id, load.getOrDefault(id, 0.0)));
    while (out.size() < budget) {
      Move m = byCount(owned, ops, frozen);
      if (m == null) {
        m = byLoad(targets, owned, weight, tabletWeight, frozen);
      }
      if (m == null) {
        return out;
      }
      out.add(m);
      double w = tabletWeight.get(m.tabletId());
      weight.merge(m.from(), -w, Double::sum);
      weight.merge(m.to(), w, Double::sum);
      owned.get(m.from()).remove(m.tabletId());
      owned.get(m.to()).add(m.tabletId());
    }
    return out;
  }

  /**
   * While tablet counts differ by two or more: the coldest movable tablet of the node with
   * the most goes to the node with the fewest.
   */
  private static Move byCount(Map<String, List<String>> owned, Map<String, Double> ops, Set<String> frozen) {
    String most = null;
    String fewest = null;
    for (String n : owned.keySet().stream().sorted().toList()) {
      if (most == null || owned.get(n).size() > owned.get(most).size()) {
        most = n;
      }
      if (fewest == null || owned.get(n).size() < owned.get(fewest).size()) {
        fewest = n;
      }
    }
    if (most == null || owned.get(most).size() - owned.get(fewest).size() < 2) {
      return null;
    }
    String coldest = null;
    for (String id : owned.get(most)) {
      if (!frozen.contains(id) && (coldest == null || ops.get(id) < ops.get(coldest))) {
        coldest = id;
      }
    }
    return coldest == null ? null : new Move(coldest, most, fewest);
  }

  /**
   * With counts even: from the heaviest node that has a movable tablet narrowing the gap to
   * the lightest by more than half a mean tablet, and more tablets than it (so counts stay
   * within one), the tablet that narrows the gap most.
   */
  private static Move byLoad(List<String> targets, Map<String, List<String>> owned, Map<String, Double> weight,
      Map<String, Double> tabletWeight, Set<String> frozen) {
    String light = targets.stream().min((a, b) -> Double.compare(weight.get(a), weight.get(b))).orElseThrow();
    List<String> heaviest = targets.stream().sorted((a, b) -> Double.compare(weight.get(b), weight.get(a))).toList();
    for (String heavy : heaviest) {
      if (heavy.equals(light) || owned.get(heavy).size() <= owned.get(light).size()) {
        continue;
      }
      double gap = weight.get(heavy) - weight.get(light);
      String best = null;
      double bestAfter = gap - 0.5;
      for (String id : owned.get(heavy)) {
        double after = Math.abs(gap - 2 * tabletWeight.get(id));
        if (!frozen.contains(id) && after < bestAfter) {
          best = id;
          bestAfter = after;
        }
      }
      if (best != null) {
        return new Move(best, heavy, light);
      }
    }
    return null;
  }
}
