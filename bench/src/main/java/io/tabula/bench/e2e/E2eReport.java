package io.tabula.bench.e2e;

import io.tabula.bench.ResultsFile;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/** The Markdown results of {@link EndToEndBench}: the table, what a request was, the targets, the setup. */
final class E2eReport {
  /** The run's sizes and settings, as the report states them. */
  record Settings(int rows, int valueBytes, long rowBytes, int concurrency, int scanConcurrency, int writeBatch, int readBatch,
      int scanChunk, int readSeconds, int warmupSeconds, int settleSeconds, int rounds, int blockCacheMb,
      int memtableMb, int memRows, String nodeJavaOpts, long seed, int officialWindowKib, int officialChannels,
      String warmUps, String settled) {}

  private final String command;
  private final Settings s;
  private final String nodeConfig;
  private final List<Measured> results;
  private final String loadBefore;
  private final String loadAfter;

  /**
   * @param loadBefore the machine's load averages (1, 5, 15 minutes) when the run started
   * @param loadAfter the same when it ended
   */
  E2eReport(String command, Settings settings, String nodeConfig, List<Measured> results, String loadBefore,
      String loadAfter) {
    this.command = command;
    this.s = settings;
    this.nodeConfig = nodeConfig;
    this.results = List.copyOf(results);
    this.loadBefore = loadBefore;
    this.loadAfter = loadAfter;
  }

  String markdown() {
    StringBuilder b = new StringBuilder();
    b.append("# Figure 6 end to end: one Tabula node process, Tabula client vs official Java client\n\n");
    b.append(ResultsFile.machineLine());
    b.append("Command: `").append(command).append("`\n\n");
    b.append("Machine load averages (1 / 5 / 15 min) at the start: ").append(loadBefore).append("; at the end: ")
        .append(loadAfter).append(". Anything above 2 means other processes competed for the two cores.\n\n");
    b.append(String.format(Locale.ROOT, "One Tabula node in its own JVM on 127.0.0.1, every write acknowledged only "
        + "after the commit log's fsync. Each client writes its own table of %,d rows (keys `row%%010d`, one "
        + "%,d-byte random value each, %.0f MB of values), then reads it back; clients take turns workload by "
        + "workload, alternating which goes first, %d round(s) of each workload per client (pooled below: values "
        + "and time added, latencies merged). %d requests in flight per client (%d for scans). Client and node share the "
        + "machine's 2 cores.%n%n", s.rows(), s.valueBytes(), s.rows() * (double) s.valueBytes() / 1e6,
        s.rounds(), s.concurrency(), s.scanConcurrency()));
    table(b);
    requests(b);
    targets(b);
    setup(b);
    return b.toString();
  }

  private void table(StringBuilder b) {
    b.append("| Workload | Client | values/s | MB/s | p50 ms | p99 ms | values/request | paper, 1 server | x paper "
        + "| >= 10x paper | Cloud Bigtable node (SSD) | meets it | node CPU us/value | client CPU us/value "
        + "| cores busy |\n");
    b.append("|---|---|---:|---:|---:|---:|---:|---:|---:|:---:|---|:---:|---:|---:|---:|\n");
    for (Measured m : results) {
      b.append(String.format(Locale.ROOT,
          "| %s | %s | %,.0f | %.1f | %.2f | %.2f | %,d | %,.0f | %.1f | %s | %s | %s | %.1f | %.1f | %.2f |%n",
          m.workload().label(), m.client(), m.valuesPerSecond(), m.megabytesPerSecond(), m.result().latencyMs(0.5),
          m.result().latencyMs(0.99), m.perRequest(), m.workload().paperValuesPerSecond(), m.timesPaper(),
          m.meetsTenTimesPaper() ? "yes" : "**no**", m.workload().cloud().label, m.meetsCloud() ? "yes" : "**no**", m.nodeCpuMicrosPerValue(), m.clientCpuMicrosPerValue(), m.coresBusy()));
    }
    b.append("\nvalues/s counts 1000-byte values written or read back (and checked); MB/s counts key and value bytes "
        + "(10^6 bytes). p50/p99 are per request, from the call to its completion: a request carries "
        + "\"values/request\" values (see below). x paper = values/s divided by the paper's one-tablet-server "
        + "figure. CPU us/value: CPU time the node process and the client process used in the timed window, "
        + "per value; cores busy: both together per second of the window (the machine has 2), which shows "
        + "whether a row was bound by CPU or by waiting.\n\n");
  }

  private void requests(StringBuilder b) {
    b.append("## What one request is\n\n");
    Map<String, Measured[]> byClient = new LinkedHashMap<>();
    for (Measured m : results) {
      byClient.computeIfAbsent(m.client(), k -> new Measured[E2eWorkload.values().length])[m.workload().ordinal()] = m;
    }
    b.append(String.format(Locale.ROOT, "* **Writes**: %,d rows in one MutateRows request, every cell at a fixed "
        + "timestamp (so the random rewrite replaces each cell). Sequential write: all rows in key order; random "
        + "write: the same rows again in a random permutation.%n", s.writeBatch()));
    b.append(String.format(Locale.ROOT, "* **Random and sequential reads**: %,d row keys in one ReadRows request "
        + "(a multi-key row set; the node looks each key up as a point read). Random: distinct uniformly random "
        + "rows; sequential: consecutive rows in key order from a random row, wrapping.%n", s.readBatch()));
    b.append(String.format(Locale.ROOT, "* **Scan**: one ReadRows of a key range of %,d rows, streamed; several "
        + "ranges in flight, walking the table in key order and wrapping.%n%n", s.scanChunk()));
    b.append("| Client | writes | reads | scans |\n|---|---|---|---|\n");
    for (Map.Entry<String, Measured[]> e : byClient.entrySet()) {
      b.append("| ").append(e.getKey()).append(" | ").append(api(e.getValue(), E2eWorkload.SEQUENTIAL_WRITE,
          E2eWorkload.RANDOM_WRITE)).append(" | ").append(api(e.getValue(), E2eWorkload.RANDOM_READ,
          E2eWorkload.SEQUENTIAL_READ)).append(" | ").append(api(e.getValue(), E2eWorkload.SCAN, E2eWorkload.SCAN))
          .append(" |\n");
    }
    b.append('\n');
  }

  private static String api(Measured[] ms, E2eWorkload a, E2eWorkload c) {
    Measured m = ms[a.ordinal()] != null ? ms[a.ordinal()] : ms[c.ordinal()];
    return m == null ? "-" : m.api();
  }

  private void targets(StringBuilder b) {
    b.append("## Targets\n\n");
    b.append("Targets: at least 10x the paper's one-server figure on every row (1,212 random reads, 10,811 random "
        + "reads (mem), 8,850 random writes, 4,425 sequential reads, 8,547 sequential writes, 15,385 scanned values "
        + "per second), and at least Cloud Bigtable's per-node SSD figures (17,000 reads/s, 14,000 writes/s, "
        + "220 MB/s scans).\n\n");
    int missed = 0;
    for (Measured m : results) {
      if (!m.meetsTenTimesPaper() || !m.meetsCloud()) {
        missed++;
        b.append(String.format(Locale.ROOT, "* Missed: %s with the %s: %,.0f values/s (%.1fx paper%s)%s.%n",
            m.workload().label(), m.client(), m.valuesPerSecond(), m.timesPaper(),
            m.meetsTenTimesPaper() ? "" : String.format(Locale.ROOT, ", needs %,.0f", 10
                * m.workload().paperValuesPerSecond()),
            m.meetsCloud() ? "" : String.format(Locale.ROOT, "; below Cloud Bigtable's %s", m.workload().cloud()
                .label)));
      }
    }
    if (missed == 0) {
      b.append("Every row meets both targets.\n");
    }
    b.append('\n');
  }

  private void setup(StringBuilder b) {
    b.append("## Setup\n\n");
    b.append("The node's settings over its defaults (`bin/tabula server --config FILE`, ports picked free, data in "
        + "a fresh temporary folder deleted at the end):\n\n```\n").append(nodeConfig).append("```\n\n");
    b.append(String.format(Locale.ROOT, "* Durability: `tabula.node.durability = fsync` (also the default): a write "
        + "is acknowledged once the commit log has fsynced it; concurrent writes share an fsync (group commit).%n"
        + "* Block cache %d MiB against %.0f MB of values per table, so \"random read (data > block cache)\" misses "
        + "the block cache. The files still sit in the operating system's page cache (the machine has far more "
        + "RAM than the data), so a miss costs a copy, a checksum and parsing a 16 KiB block (the default block size), not a device read.%n"
        + "* Memtable %d MiB (tablets freeze and flush past it), so most rows are in SSTables when the reads start; "
        + "the last up to %d MiB written per tablet may still be in its memtable.%n"
        + "* Random read (mem), as the paper's: a table of its own whose locality group is held in memory "
        + "(`TabulaAdmin.setInMemory`, Tabula's own call: the Cloud Bigtable API has no field for it), so its "
        + "SSTables are read whole into the node's memory. The first client to run the row writes %,d rows into "
        + "it, untimed (about 100 MB of values, the paper's figure for this row, so that it fit in memory), and "
        + "waits for the node to idle; both clients then read uniformly random rows of it.%n"
        + "* Before the first workload each client writes, reads back at random and scans a scratch table "
        + "of its own, untimed, in cycles of 8 s until the JIT compilers of both JVMs used under 5%% of a core "
        + "in a cycle (`--warmup-max-seconds` at most), so the timed windows measure compiled code; it took %s.%n"
        + "* Timed windows: writes run until every row is acknowledged; then, untimed, at least %d s and until the "
        + "node idles (under 10%% of a core for two seconds: flushes and compactions done, including the major "
        + "compaction a tablet runs once it has had no writes for about 4 s), so reads do not run against a "
        + "compaction backlog. The work a write window left behind, as time to idle and node CPU "
        + "per value written: %s.%n"
        + "* "
        + "Read workloads run %d s after a %d s untimed warm-up of the same requests.%n"
        + "* Connections: the Tabula client takes turns over two connections for calls answered whole and two "
        + "for scans, with a 4 MiB HTTP/2 window for scans; the official client's channel pool has %d "
        + "connection(s) and a %s HTTP/2 window (`--official-channels`, `--official-window-kib`).%n"
        + "* Node JVM: `%s`; client JVM: the bench's own (`JAVA_OPTS`). Seed %d. Values are checked: every "
        + "value's length, the bytes of every 16th row, and that each request returned exactly the rows asked "
        + "for.%n",
        s.blockCacheMb(), s.rows() * (double) s.valueBytes() / 1e6, s.memtableMb(), s.memtableMb(), s.memRows(),
        s.warmUps(), s.settleSeconds(), s.settled(), s.readSeconds(), s.warmupSeconds(), s.officialChannels(),
        s.officialWindowKib() == 0 ? "1 MiB (the library's default)" : s.officialWindowKib() + " KiB",
        s.nodeJavaOpts(), s.seed()));
  }
}
