package io.tabula.bench;

import io.tabula.persistence.model.Mutation;
import io.tabula.persistence.model.RowMutation;
import io.tabula.persistence.read.ReadFilter;
import io.tabula.persistence.schema.Aggregator;
import io.tabula.persistence.schema.ColumnFamily;
import io.tabula.persistence.schema.GcPolicy;
import io.tabula.persistence.schema.LocalityGroup;
import io.tabula.persistence.schema.TableSchema;
import io.tabula.persistence.storage.FileStorage;
import io.tabula.persistence.tablet.Tablet;
import io.tabula.persistence.tablet.TabletOptions;
import io.tabula.persistence.tablet.TabletServer;
import io.tabula.persistence.wal.CommitLogOptions;
import io.tabula.persistence.wal.Durability;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * What an aggregate cell costs the engine, never part of the test verdict: one hot cell of an
 * Int64 sum family and one of an HLL family, added to N times (AddToCell), read while the N
 * operands are still in the memtable (every read folds them) and again after a flush (the flush
 * folded them into one), against a cell of raw values overwritten N times, side by side in one
 * process. The log is OS-buffered, so adds cost the engine, not the disk's sync.
 */
@Command(name = "aggregates", mixinStandardHelpOptions = true,
    description = "Engine cost of aggregate cells: adds, and reads folding N operands before and after a flush.")
public final class AggregateFoldBench implements Callable<Integer> {
  @Option(names = "--operands", split = ",", description = "Adds to one cell; default: 1000,10000,100000")
  int[] operands = {1_000, 10_000, 100_000};

  @Option(names = "--reads", description = "Reads timed per case; the report gives their median; default: ${DEFAULT-VALUE}")
  int reads = 201;

  @Option(names = "--out", description = "Markdown report written here too (default: printed only)")
  Path out;

  private static final TableSchema SCHEMA = TableSchema.of(List.of(
      new ColumnFamily("sum", GcPolicy.KEEP_ALL, LocalityGroup.DEFAULT_NAME, Aggregator.SUM),
      new ColumnFamily("hll", GcPolicy.KEEP_ALL, LocalityGroup.DEFAULT_NAME, Aggregator.HLL),
      new ColumnFamily("raw", GcPolicy.maxVersions(1), LocalityGroup.DEFAULT_NAME)), List.of());

  public static void main(String[] args) {
    System.exit(new CommandLine(new AggregateFoldBench()).execute(args));
  }

  @Override
  public Integer call() throws Exception {
    StringBuilder report = new StringBuilder("| cell | operands | adds/s | read, operands in the memtable (µs, median)"
        + " | read after a flush (µs, median) |\n|---|---|---|---|---|\n");
    for (int n : operands) {
      for (String family : List.of("raw", "sum", "hll")) {
        Path dir = Files.createTempDirectory("tabula-aggregates");
        TabletServer server = TabletServer.open(new FileStorage(dir), new TabletServer.Options("bench", 64 << 20, 1,
            new CommitLogOptions(64 << 20, Durability.OS_BUFFERED), TabletOptions.defaults()
                .withMemtableBytes(1L << 30), 2L << 30), () -> System.currentTimeMillis() * 1000, t -> SCHEMA,
            (what, e) -> { });
        try {
          Tablet t = server.createTablet("bench", "t1", new byte[0], new byte[0]);
          byte[] row = "hot".getBytes(StandardCharsets.UTF_8);
          byte[] q = "q".getBytes(StandardCharsets.UTF_8);
          long start = System.nanoTime();
          List<CompletableFuture<Void>> inFlight = new ArrayList<>();
          for (int i = 0; i < n; i++) {
            Mutation m = family.equals("raw") ? new Mutation.SetCell("raw", q, 1000, Long.toString(i).getBytes(
                StandardCharsets.UTF_8)) : new Mutation.AddToCell(family, q, 1000, i);
            inFlight.add(t.apply(RowMutation.of(row, m)));
            if (inFlight.size() == 1000) {
              inFlight.forEach(CompletableFuture::join);
              inFlight.clear();
            }
          }
          inFlight.forEach(CompletableFuture::join);
          double addsPerSecond = n / ((System.nanoTime() - start) / 1e9);
          double before = medianReadMicros(t, row);
          t.freezeAndFlush().join();
          double after = medianReadMicros(t, row);
          String line = String.format(Locale.ROOT, "| %s | %,d | %,.0f | %,.1f | %,.1f |%n", family, n, addsPerSecond,
              before, after);
          report.append(line);
          System.out.print(line);
        } finally {
          server.close();
          deleteTree(dir);
        }
      }
    }
    System.out.println();
    System.out.print(report);
    if (out != null) {
      Files.writeString(out, report.toString());
    }
    return 0;
  }

  private double medianReadMicros(Tablet t, byte[] row) throws Exception {
    for (int i = 0; i < Math.max(5, reads / 10); i++) {
      t.read(row, ReadFilter.all()); // warm
    }
    double[] us = new double[reads];
    for (int i = 0; i < reads; i++) {
      long s = System.nanoTime();
      if (t.read(row, ReadFilter.all()).isEmpty()) {
        throw new IllegalStateException("the hot row reads empty");
      }
      us[i] = (System.nanoTime() - s) / 1e3;
    }
    Arrays.sort(us);
    return us[reads / 2];
  }

  private static void deleteTree(Path p) throws java.io.IOException {
    if (Files.isDirectory(p)) {
      try (var s = Files.list(p)) {
        for (Path c : s.toList()) {
          deleteTree(c);
        }
      }
    }
    Files.deleteIfExists(p);
  }
}
