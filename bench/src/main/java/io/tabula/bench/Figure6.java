package io.tabula.bench;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * The paper's Figure 6 workloads (§7) on the Tabula engine and on RocksDB, configured alike,
 * side by side in one run. Prints a table of ops/s per engine and the ratio Tabula/RocksDB,
 * and writes it as Markdown. See bench/README.md for what each workload measures.
 */
@Command(name = "figure6", mixinStandardHelpOptions = true, sortOptions = false,
    description = "Runs the Figure 6 workloads on Tabula and RocksDB and compares them.")
public final class Figure6 implements Callable<Integer> {
  /** Preset data set sizes: rows of {@code --value-bytes} values. */
  enum Size {
    QUICK(200_000), FULL(2_000_000);

    final int rows;

    Size(int rows) {
      this.rows = rows;
    }
  }

  @Option(names = "--size", description = "quick (200,000 rows, ~200 MB of values) or full (2,000,000 rows, ~2 GB); "
      + "default: ${DEFAULT-VALUE}", defaultValue = "quick")
  private String size;

  @Option(names = "--rows", description = "Number of rows; overrides --size.")
  private Integer rows;

  @Option(names = "--value-bytes", description = "Bytes of every value; default: ${DEFAULT-VALUE}",
      defaultValue = "1000")
  private int valueBytes;

  @Option(names = "--dir", description = "Scratch directory, wiped at start and end; default: ${DEFAULT-VALUE}",
      defaultValue = "bench-data")
  private Path dir;

  @Option(names = "--block-size", description = "Data block size in bytes; default: ${DEFAULT-VALUE}",
      defaultValue = "65536")
  private int blockSize;

  @Option(names = "--cache-mb", description = "Block cache in MiB; default: ${DEFAULT-VALUE}", defaultValue = "64")
  private long cacheMb;

  @Option(names = "--scan-cache-mb", description = "Scan cache in MiB of the tabula-scan-cache engine, on top of "
      + "its block cache; default: ${DEFAULT-VALUE}", defaultValue = "32")
  private long scanCacheMb;

  @Option(names = "--memtable-mb", description = "Memtable size in MiB, both engines; default: ${DEFAULT-VALUE}",
      defaultValue = "64")
  private long memtableMb;

  @Option(names = "--bloom-bits", description = "Bloom filter bits per key; default: ${DEFAULT-VALUE}",
      defaultValue = "10")
  private int bloomBits;

  @Option(names = "--write-window", description = "Tabula writes in flight / RocksDB puts per WriteBatch; "
      + "default: ${DEFAULT-VALUE}", defaultValue = "100")
  private int writeWindow;

  @Option(names = "--workloads", split = ",", description = "Comma-separated workloads; default: all of "
      + "seq-write-durable, seq-write-buffered, random-write-durable, random-write-buffered, random-read, "
      + "random-read-mem, seq-read, scan")
  private List<String> workloads;

  @Option(names = "--engines", split = ",", description = "Comma-separated engines; default: ${DEFAULT-VALUE}",
      defaultValue = "tabula,rocksdb")
  private List<String> engines;

  @Option(names = "--seed", description = "Seed of values and key orders; default: ${DEFAULT-VALUE}",
      defaultValue = "42")
  private long seed;

  @Option(names = "--read-ops", description = "Timed reads per read workload, at most; default: ${DEFAULT-VALUE}",
      defaultValue = "200000")
  private long readOps;

  @Option(names = "--read-seconds", description = "Longest timed window of a read workload or scan; "
      + "default: ${DEFAULT-VALUE}", defaultValue = "20")
  private long readSeconds;

  @Option(names = "--write-seconds", description = "Longest timed window of a write workload; "
      + "default: ${DEFAULT-VALUE}", defaultValue = "60")
  private long writeSeconds;

  @Option(names = "--scan-passes", description = "Full scans timed in the scan workload; default: ${DEFAULT-VALUE}",
      defaultValue = "3")
  private int scanPasses;

  @Option(names = "--warmup-ops", description = "Untimed reads before each read workload; default: ${DEFAULT-VALUE}",
      defaultValue = "10000")
  private long warmupOps;

  @Option(names = "--write-repeats", defaultValue = "3",
      description = "Runs of each write workload per engine, taking turns; the median is reported; "
          + "default: ${DEFAULT-VALUE}")
  private int writeRepeats;

  @Option(names = "--note", description = "A line to add to the report's notes (repeatable), e.g. what was "
      + "unusual about this build or machine.")
  private List<String> extraNotes;

  @Option(names = "--jfr", description = "Record this JVM with the flight recorder into this file, and add where "
      + "the time went in each timed write run to the report")
  private Path jfr;

  @Option(names = "--out", description = "Markdown result file; default: bench/results/figure6-<size>.md")
  private Path out;

  public static void main(String[] args) {
    System.exit(new CommandLine(new Figure6()).execute(args));
  }

  @Override
  public Integer call() throws IOException {
    if (writeRepeats < 1) {
      throw new CommandLine.ParameterException(new CommandLine(this), "--write-repeats must be at least 1, was "
          + writeRepeats);
    }
    Size preset = Size.valueOf(size.toUpperCase(Locale.ROOT));
    int n = rows != null ? rows : preset.rows;
    String sizeName = rows != null ? n + "-rows" : size.toLowerCase(Locale.ROOT);
    Set<Workload> selected = EnumSet.noneOf(Workload.class);
    if (workloads == null || workloads.isEmpty()) {
      selected.addAll(EnumSet.allOf(Workload.class));
    } else {
      workloads.forEach(w -> selected.add(Workload.byId(w)));
    }
    List<EngineKind> kinds = new ArrayList<>();
    for (String e : engines) {
      EngineKind k = EngineKind.byId(e);
      if (!kinds.contains(k)) {
        kinds.add(k);
      }
    }
    kinds.sort(null);
    EngineConfig config = new EngineConfig(blockSize, cacheMb << 20, memtableMb << 20, bloomBits, writeWindow,
        2, 4, scanCacheMb << 20);
    Dataset data = new Dataset(n, valueBytes, seed);
    WorkloadRunner.Limits limits = new WorkloadRunner.Limits(readOps, readSeconds * 1_000_000_000L,
        writeSeconds * 1_000_000_000L, warmupOps, scanPasses);

    DataDirectory scratch = DataDirectory.prepare(dir);
    BenchRun.Report report;
    jdk.jfr.Recording recording = jfr == null ? null : JfrDigest.startRecording();
    try {
      report = new BenchRun(scratch, config, data, limits, kinds, selected, writeRepeats).run();
    } finally {
      scratch.wipe();
      BenchHdfs.stop();
      if (recording != null) {
        recording.stop();
        recording.dump(jfr);
        recording.close();
      }
    }

    if (extraNotes != null) {
      report.notes().addAll(0, extraNotes);
    }
    System.out.println();
    System.out.print(report.table().toText());
    report.notes().forEach(note -> System.out.println("* " + note));
    Path file = out != null ? out : Path.of("bench", "results", "figure6-" + sizeName + ".md");
    ResultsFile.write(file, report.toMarkdown(sizeName) + (jfr == null ? "" : JfrDigest.section("This JVM's "
        + "flight recording, for each timed write run (both engines run in it; the file syncs are the logs' and the "
        + "flushes').", JfrDigest.digest(jfr, report.windows()))));
    System.out.println("\nMarkdown written to " + file);
    return 0;
  }
}
