package io.tabula.actors.master;

import io.tabula.actors.master.Master.Event;
import io.tabula.persistence.encoding.ByteArrays;
import io.tabula.protocol.kryo.KryoSerializable;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;

/**
 * What the master shows operators beside its directory: the tablets' load over time for the
 * key visualizer ({@link LoadHistory}), the latest operations it recorded (splits, moves,
 * merges, recoveries; newest last) and their counts since this master started
 * ({@link MasterCounts}, for the node's metrics). Nothing here is journaled: a new master starts
 * with none of it. Owned by the master actor's thread, but for the counts.
 */
public final class MasterViews {
  /** How many recent operations are kept. */
  static final int RECENT = 200;

  /** One recorded operation: when (epoch millis), what ({@code kind}), of which table and tablet. */
  public record Operation(long millis, String kind, String table, String tablet, String detail)
      implements KryoSerializable {}

  private final LoadHistory history;
  private final MasterCounts counts;
  private final ArrayDeque<Operation> recent = new ArrayDeque<>();
  /** Whether the journal has been replayed: events before that are history, not news. */
  private boolean recovered;

  MasterViews(LoadHistory history, MasterCounts counts) {
    this.history = history;
    this.counts = counts;
  }

  void recovered() {
    recovered = true;
  }

  void load(Directory d, Master.ReportLoad r) {
    history.add(d, r, System.currentTimeMillis());
  }

  LoadHistory.View keyViz(Directory d, String table) {
    return history.view(d, table, System.currentTimeMillis());
  }

  /** The tablets' recent load ({@link Master.GetLoad}), from {@code loads}: bytes, ops, reads and writes per tablet. */
  static Master.LoadReport loadReport(java.util.Map<String, double[]> loads) {
    java.util.Map<String, Master.TabletLoad> out = new java.util.TreeMap<>();
    loads.forEach((id, l) -> out.put(id, new Master.TabletLoad(l[0], (long) l[1], l[2], l[3])));
    return new Master.LoadReport(out);
  }

  List<Operation> operations() {
    return new ArrayList<>(recent);
  }

  /** Notes event {@code e}, which the master applied to directory {@code d}. */
  void applied(Directory d, Event e) {
    if (!recovered) {
      return;
    }
    if (e instanceof Master.TabletSplit x) {
      counts.splits.increment();
      add("split", x.table(), x.parentId(), "at " + ByteArrays.show(x.splitRow()) + " into " + x.leftId() + " and "
          + x.rightId());
    } else if (e instanceof Master.MoveStarted x) {
      counts.moves.increment();
      add("move", table(d, x.tabletId()), x.tabletId(), "from " + x.from() + " to " + x.to());
    } else if (e instanceof Master.TabletsMerged x) {
      counts.merges.increment();
      add("merge", x.table(), x.childId(), "of " + x.leftId() + " and " + x.rightId());
    } else if (e instanceof Master.TabletsOpened x) {
      x.opened().forEach(o -> applied(d, o));
    } else if (e instanceof Master.TabletOpened x && !x.recovered().isEmpty()) {
      counts.recoveries.increment();
      add("recovery", table(d, x.tabletId()), x.tabletId(), "opened on " + x.node() + " after replaying "
          + x.recovered());
    } else if (e instanceof Master.TabletsAssigned x) {
      x.owners().forEach((id, to) -> {
        String was = d.ownerOf(id);
        if (!was.isEmpty() && !was.equals(to)) {
          add("reassign", table(d, id), id, "from " + was + " (gone) to " + to);
        }
      });
    }
  }

  private static String table(Directory d, String tabletId) {
    TabletInfo t = d.tablet(tabletId);
    return t == null ? "" : t.table();
  }

  private void add(String kind, String table, String tablet, String detail) {
    recent.addLast(new Operation(System.currentTimeMillis(), kind, table, tablet, detail));
    while (recent.size() > RECENT) {
      recent.pollFirst();
    }
  }
}
