package io.tabula.cluster.metrics;

import com.google.errorprone.annotations.concurrent.GuardedBy;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.FunctionTimer;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MultiGauge;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.binder.jvm.ClassLoaderMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmGcMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmMemoryMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmThreadMetrics;
import io.micrometer.core.instrument.binder.system.ProcessorMetrics;
import io.micrometer.core.instrument.binder.system.UptimeMetrics;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.tabula.actors.master.MasterCounts;
import io.tabula.actors.tablet.LocalTablets;
import io.tabula.actors.tablet.TabletLoad;
import io.tabula.cluster.routing.TabletLocations;
import io.tabula.persistence.cache.BlockCache;
import io.tabula.persistence.cache.ScanCache;
import io.tabula.persistence.tablet.EngineStats;
import io.tabula.persistence.tablet.TabletServer;
import io.tabula.persistence.wal.CommitLog;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Supplier;
import java.util.function.ToDoubleFunction;

/**
 * A node's metrics, in Prometheus's text format ({@link #scrape}, served at {@code GET
 * /metrics} on the Management HTTP port): gRPC calls ({@link GrpcMetrics}), rows and bytes
 * read and written per table, the hottest tablets, the memtables, flushes and compactions,
 * the commit log, the block cache, the master's operations while it runs here, and the JVM.
 * The names are listed in {@code docs/operations.md}.
 *
 * <p>What the engine and the tablets count is plain counters of theirs (no metrics library
 * below this module), read here when Prometheus scrapes. Per-table meters come and go with
 * the tables, at most {@value #MAX_TABLES} of them: a table seen while they are all taken is
 * counted under {@code table="_other"} for as long as it exists (so no counter ever goes
 * down), and a deleted one's totals stay there. Per-tablet gauges are the
 * {@value #TOP_TABLETS} busiest tablets of the node. Thread-safe: a scrape refreshes those
 * under a lock of its own.
 */
public final class NodeMetrics implements AutoCloseable {
  /** The most tables with meters of their own. */
  static final int MAX_TABLES = 100;
  /** How many of the node's busiest tablets have gauges. */
  static final int TOP_TABLETS = 20;
  static final String OTHER = "_other";

  private final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
  private final LocalTablets local;
  private final Supplier<Set<String>> tables;
  private final ReentrantLock refreshing = new ReentrantLock();
  /** Tables with meters of their own, to their meters. */
  @GuardedBy("refreshing")
  private final Map<String, List<Meter>> tableMeters = new HashMap<>();
  /** Tables counted under "_other": seen while every per-table meter was taken. */
  @GuardedBy("refreshing")
  private final java.util.Set<String> inOther = new java.util.HashSet<>();
  /** Totals of the deleted tables that were counted under "_other", so its counters never go down. */
  @GuardedBy("refreshing")
  private final long[] others = new long[4];
  private final JvmGcMetrics gc = new JvmGcMetrics();
  private final GrpcMetrics grpc = new GrpcMetrics(registry);
  @GuardedBy("refreshing")
  private final MultiGauge hotTablets;

  /**
   * @param engine the node's storage engine
   * @param local the tablets served here
   * @param tables the tables that exist now (the directory's)
   * @param masterCounts what the master counted while it ran on this node
   * @param locations the node's cache of tablet locations
   */
  public NodeMetrics(TabletServer engine, LocalTablets local, Supplier<Set<String>> tables, MasterCounts masterCounts,
      TabletLocations locations) {
    this.local = local;
    this.tables = tables;
    new JvmMemoryMetrics().bindTo(registry);
    gc.bindTo(registry);
    new JvmThreadMetrics().bindTo(registry);
    new ClassLoaderMetrics().bindTo(registry);
    new ProcessorMetrics().bindTo(registry);
    new UptimeMetrics().bindTo(registry);
    engine(engine);
    Gauge.builder("tabula.tablets", local, l -> l.loads().size()).description("Tablets served by this node")
        .register(registry);
    FunctionCounter.builder("tabula.location.lookups", locations, TabletLocations::lookups)
        .description("Lookups of tablet locations this node asked the master for").register(registry);
    Gauge.builder("tabula.location.cache.tablets", locations, TabletLocations::held)
        .description("Tablet locations this node holds to route requests").register(registry);
    masterCounter("splits", "Tablet splits the master recorded while it ran on this node", masterCounts.splits::sum,
        masterCounts);
    masterCounter("merges", "Tablet merges the master recorded while it ran on this node", masterCounts.merges::sum,
        masterCounts);
    masterCounter("moves", "Tablet moves the master started while it ran on this node", masterCounts.moves::sum,
        masterCounts);
    masterCounter("recoveries", "Tablets opened after a replay of another node's commit log, as the master "
        + "recorded them while it ran on this node", masterCounts.recoveries::sum, masterCounts);
    hotTablets = MultiGauge.builder("tabula.tablet.rows.per.second")
        .description("Rows read or written per second by the node's busiest tablets, over their last report")
        .register(registry);
    FunctionCounter.builder("tabula.table.rows.read", this, m -> m.other(0)).tag("table", OTHER)
        .description("Rows read, per table").register(registry);
    FunctionCounter.builder("tabula.table.read", this, m -> m.other(1)).tag("table", OTHER).baseUnit("bytes")
        .description("Bytes of rows returned, per table").register(registry);
    FunctionCounter.builder("tabula.table.rows.written", this, m -> m.other(2)).tag("table", OTHER)
        .description("Row mutations applied, per table").register(registry);
    FunctionCounter.builder("tabula.table.written", this, m -> m.other(3)).tag("table", OTHER).baseUnit("bytes")
        .description("Bytes of mutations applied, per table").register(registry);
  }

  /** The timing of the node's gRPC calls. */
  public GrpcMetrics grpc() {
    return grpc;
  }

  /** Every metric now, in Prometheus's text exposition format. */
  public String scrape() {
    refresh();
    return registry.scrape();
  }

  private void engine(TabletServer engine) {
    EngineStats stats = engine.env().stats();
    for (EngineStats.Work w : EngineStats.Work.values()) {
      String kind = w.name().toLowerCase();
      String what = switch (w) {
        case FLUSH -> "Memtable flushes";
        case MERGE -> "Merging compactions of some of a locality group's SSTables";
        case MAJOR_COMPACTION -> "Major compactions (all of a locality group's SSTables, deletions dropped)";
      };
      FunctionTimer.builder("tabula.background", stats, s -> s.totals(w).count(), s -> s.totals(w).nanos(),
          TimeUnit.NANOSECONDS).tag("kind", kind).description(what + ": how many ended and their time")
          .register(registry);
      FunctionCounter.builder("tabula.background.written", stats, s -> s.totals(w).bytesWritten()).tag("kind", kind)
          .baseUnit("bytes").description(what + ": bytes of SSTables written").register(registry);
    }
    CommitLog log = engine.env().log();
    FunctionTimer.builder("tabula.commitlog.syncs", log, l -> l.stats().syncs(), l -> l.stats().syncNanos(),
        TimeUnit.NANOSECONDS).description("Commit-log syncs (fsync or hsync) and their time").register(registry);
    logCounter("groups", "Commit-log group writes (one write, and one sync, for many mutations)",
        l -> l.stats().groups(), log, null);
    logCounter("records", "Commit-log records written (mutations of one tablet's row)", l -> l.stats().records(),
        log, null);
    logCounter("written", "Bytes written to the commit log", l -> l.stats().bytes(), log, "bytes");
    BlockCache cache = engine.env().cache();
    FunctionCounter.builder("tabula.blockcache.hits", cache, c -> c.stats().hits())
        .description("Block-cache lookups that found the block").register(registry);
    FunctionCounter.builder("tabula.blockcache.misses", cache, c -> c.stats().misses())
        .description("Block-cache lookups that read the block from storage").register(registry);
    FunctionCounter.builder("tabula.blockcache.evictions", cache, c -> c.stats().evictions())
        .description("Blocks evicted from the block cache").register(registry);
    Gauge.builder("tabula.blockcache.size", cache, c -> c.stats().weightedBytes()).baseUnit("bytes")
        .description("Bytes of blocks the block cache holds").register(registry);
    ScanCache scans = engine.env().scanCache();
    if (scans != null) {
      FunctionCounter.builder("tabula.scancache.hits", scans, c -> c.stats().hits())
          .description("Point reads of a row in an SSTable answered by the scan cache").register(registry);
      FunctionCounter.builder("tabula.scancache.misses", scans, c -> c.stats().misses())
          .description("Point reads of a row in an SSTable that read the file").register(registry);
      Gauge.builder("tabula.scancache.size", scans, c -> c.stats().weightedBytes()).baseUnit("bytes")
          .description("Bytes of rows the scan cache holds").register(registry);
    }
    Gauge.builder("tabula.sstables.in.memory", engine, TabletServer::inMemoryBytes).baseUnit("bytes")
        .description("Bytes of SSTables held whole in memory: the files of in-memory locality groups")
        .register(registry);
    Gauge.builder("tabula.memtables.size", engine, e -> e.env().memtables().bytes()).baseUnit("bytes")
        .description("Bytes the memtables of the node's tablets hold (active and frozen)").register(registry);
    Gauge.builder("tabula.memtables.limit", engine, e -> e.env().memtables().limit()).baseUnit("bytes")
        .description("Bytes all the node's memtables may hold together").register(registry);
  }

  private void logCounter(String name, String description, ToDoubleFunction<CommitLog> f, CommitLog log,
      String unit) {
    FunctionCounter.Builder<CommitLog> b = FunctionCounter.builder("tabula.commitlog." + name, log, f)
        .description(description);
    if (unit != null) {
      b.baseUnit(unit);
    }
    b.register(registry);
  }

  private void masterCounter(String name, String description, Supplier<Long> f, MasterCounts counts) {
    FunctionCounter.builder("tabula.master." + name, counts, c -> f.get()).description(description)
        .register(registry);
  }

  private double other(int i) {
    refreshing.lock();
    try {
      long n = others[i];
      Map<String, TabletLoad.TableTotals> totals = local.tableTotals();
      for (String t : inOther) {
        TabletLoad.TableTotals tt = totals.get(t);
        n += tt == null ? 0 : value(tt, i);
      }
      return n;
    } finally {
      refreshing.unlock();
    }
  }

  private static long value(TabletLoad.TableTotals t, int i) {
    return switch (i) {
      case 0 -> t.rowsRead();
      case 1 -> t.bytesRead();
      case 2 -> t.rowsWritten();
      default -> t.bytesWritten();
    };
  }

  /** Adds meters for new tables (while there is room), removes those of tables gone, and ranks the tablets. */
  private void refresh() {
    refreshing.lock();
    try {
      Set<String> exist = tables.get();
      Map<String, TabletLoad.TableTotals> totals = local.tableTotals();
      for (String gone : new ArrayList<>(tableMeters.keySet())) {
        if (!exist.contains(gone)) {
          tableMeters.remove(gone).forEach(registry::remove);
          local.forgetTable(gone);
        }
      }
      for (String gone : new ArrayList<>(inOther)) {
        if (!exist.contains(gone)) {
          TabletLoad.TableTotals t = totals.get(gone);
          for (int i = 0; t != null && i < others.length; i++) {
            others[i] += value(t, i);
          }
          inOther.remove(gone);
          local.forgetTable(gone);
        }
      }
      totals.forEach((table, t) -> {
        if (tableMeters.containsKey(table) || inOther.contains(table) || !exist.contains(table)) {
          return;
        }
        if (tableMeters.size() >= MAX_TABLES) {
          inOther.add(table);
        } else {
          tableMeters.put(table, List.of(
              FunctionCounter.builder("tabula.table.rows.read", t, TabletLoad.TableTotals::rowsRead)
                  .tag("table", table).description("Rows read, per table").register(registry),
              FunctionCounter.builder("tabula.table.read", t, TabletLoad.TableTotals::bytesRead).tag("table", table)
                  .baseUnit("bytes").description("Bytes of rows returned, per table").register(registry),
              FunctionCounter.builder("tabula.table.rows.written", t, TabletLoad.TableTotals::rowsWritten)
                  .tag("table", table).description("Row mutations applied, per table").register(registry),
              FunctionCounter.builder("tabula.table.written", t, TabletLoad.TableTotals::bytesWritten)
                  .tag("table", table).baseUnit("bytes").description("Bytes of mutations applied, per table")
                  .register(registry)));
        }
      });
      List<MultiGauge.Row<?>> rows = new ArrayList<>();
      local.loads().entrySet().stream()
          .map(e -> new Ranked(e.getKey(), e.getValue().table(), e.getValue().lastRates()))
          .sorted(Comparator.comparingDouble(r -> -(r.rates[0] + r.rates[2])))
          .limit(TOP_TABLETS)
          .forEach(r -> {
            rows.add(MultiGauge.Row.of(Tags.of("table", r.table, "tablet", r.tablet, "op", "read"), r.rates[0]));
            rows.add(MultiGauge.Row.of(Tags.of("table", r.table, "tablet", r.tablet, "op", "write"), r.rates[2]));
          });
      hotTablets.register(rows, true);
    } finally {
      refreshing.unlock();
    }
  }

  private record Ranked(String tablet, String table, double[] rates) {}

  /** Stops the GC listener and closes the registry (the node is stopping). */
  @Override
  public void close() {
    gc.close();
    registry.close();
  }
}
