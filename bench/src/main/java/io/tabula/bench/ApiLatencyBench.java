package io.tabula.bench;

import com.google.cloud.bigtable.data.v2.models.Row;
import com.google.cloud.bigtable.data.v2.models.RowMutation;
import com.google.cloud.bigtable.data.v2.models.TableId;
import com.google.protobuf.ByteString;
import com.google.protobuf.UnsafeByteOperations;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * Latency of single Cloud Bigtable API calls, one at a time, against an in-process Tabula
 * node and against Google's bundled emulator, both on 127.0.0.1 and both driven by the
 * official Java client: {@code MutateRow} of a new row and a point {@code ReadRows}
 * ({@code readRow}) of a row that exists. The targets take turns in rounds so both see the
 * same machine noise. A benchmark, never a test.
 */
@Command(name = "api-latency", mixinStandardHelpOptions = true, sortOptions = false,
    description = "MutateRow and point ReadRows latency: Tabula vs Google's Bigtable emulator.")
public final class ApiLatencyBench implements Callable<Integer> {
  static final String TABLE = "latency";
  static final String FAMILY = "f";
  static final ByteString QUALIFIER = ByteString.copyFromUtf8("v");

  @Option(names = "--ops", description = "Timed calls per RPC and target; default: ${DEFAULT-VALUE}",
      defaultValue = "5000")
  private int ops;

  @Option(names = "--warmup", description = "Untimed calls per RPC and target first; default: ${DEFAULT-VALUE}",
      defaultValue = "2000")
  private int warmup;

  @Option(names = "--rounds", description = "Turns each target takes; default: ${DEFAULT-VALUE}",
      defaultValue = "10")
  private int rounds;

  @Option(names = "--value-bytes", description = "Bytes of every value; default: ${DEFAULT-VALUE}",
      defaultValue = "1000")
  private int valueBytes;

  @Option(names = "--seed", description = "Seed of values and read keys; default: ${DEFAULT-VALUE}",
      defaultValue = "42")
  private long seed;

  @Option(names = "--quick", description = "1,000 timed calls after 500 warm-up calls (overrides --ops, --warmup).")
  private boolean quick;

  @Option(names = "--out", description = "Markdown result file; default: ${DEFAULT-VALUE}",
      defaultValue = "bench/results/api-latency.md")
  private Path out;

  @CommandLine.Spec
  private CommandLine.Model.CommandSpec spec;

  public static void main(String[] args) {
    System.exit(new CommandLine(new ApiLatencyBench()).execute(args));
  }

  /** One target's state: its peer, the rows written so far, the timings. */
  private static final class Target {
    final ApiPeer peer;
    final Random readKeys;
    int written;
    final long[] mutate;
    final long[] read;
    /** Timed calls so far, of each RPC. */
    int count;
    long mutateWallNanos;
    long readWallNanos;

    Target(ApiPeer peer, long seed, int ops) {
      this.peer = peer;
      this.readKeys = new Random(seed);
      this.mutate = new long[ops];
      this.read = new long[ops];
    }
  }

  @Override
  public Integer call() throws Exception {
    if (quick) {
      ops = 1_000;
      warmup = 500;
    }
    if (ops < 1 || rounds < 1 || valueBytes < 1 || warmup < 0) {
      throw new CommandLine.ParameterException(spec.commandLine(),
          "--ops, --rounds and --value-bytes must be positive, --warmup must not be negative");
    }
    // Every target writes warmup + ops new rows.
    Dataset data = new Dataset(warmup + ops, valueBytes, seed);
    List<Target> targets = new ArrayList<>();
    try {
      System.err.println("starting Tabula (in process) and the bundled emulator ...");
      targets.add(new Target(ApiPeer.tabula(), seed, ops));
      targets.add(new Target(ApiPeer.emulator(), seed, ops));
      for (Target t : targets) {
        t.peer.createTable(TABLE, FAMILY);
      }
      for (Target t : targets) {
        System.err.printf(Locale.ROOT, "warming up %s: %,d writes, %,d reads%n", t.peer.name(), warmup, warmup);
        for (int i = 0; i < warmup; i++) {
          write(t, data);
        }
        for (int i = 0; i < warmup; i++) {
          read(t, data);
        }
      }
      for (int r = 0; r < rounds; r++) {
        int n = ops * (r + 1) / rounds - ops * r / rounds;
        for (int k = 0; k < targets.size(); k++) {
          // Alternate which target goes first so neither always follows the other.
          Target t = targets.get((r % 2 == 0) ? k : targets.size() - 1 - k);
          long start = System.nanoTime();
          for (int i = 0; i < n; i++) {
            t.mutate[t.count + i] = write(t, data);
          }
          long mid = System.nanoTime();
          for (int i = 0; i < n; i++) {
            t.read[t.count + i] = read(t, data);
          }
          t.count += n;
          t.mutateWallNanos += mid - start;
          t.readWallNanos += System.nanoTime() - mid;
        }
        System.err.printf(Locale.ROOT, "round %d/%d done%n", r + 1, rounds);
      }
      String report = report(targets.get(0), targets.get(1));
      System.out.print(report);
      ResultsFile.write(out, report);
      System.err.println("wrote " + out);
      return 0;
    } finally {
      for (Target t : targets) {
        t.peer.close();
      }
    }
  }

  /** Writes the next new row of {@code t}; returns the call's latency in nanoseconds. */
  private static long write(Target t, Dataset data) {
    int i = t.written;
    RowMutation m = RowMutation.create(TableId.of(TABLE), UnsafeByteOperations.unsafeWrap(data.key(i)))
        .setCell(FAMILY, QUALIFIER, 1_000L, UnsafeByteOperations.unsafeWrap(data.value(i)));
    long start = System.nanoTime();
    t.peer.data().mutateRow(m);
    long nanos = System.nanoTime() - start;
    t.written = i + 1;
    return nanos;
  }

  /** Reads one uniformly chosen row already written to {@code t}; returns the call's latency in nanoseconds. */
  private static long read(Target t, Dataset data) {
    ByteString key = UnsafeByteOperations.unsafeWrap(data.key(t.readKeys.nextInt(t.written)));
    long start = System.nanoTime();
    Row row = t.peer.data().readRow(TableId.of(TABLE), key);
    long nanos = System.nanoTime() - start;
    if (row == null || row.getCells().size() != 1) {
      throw new IllegalStateException(t.peer.name() + ": row " + key.toStringUtf8() + " read back as " + row);
    }
    return nanos;
  }

  /** p50, p90, p99, mean in milliseconds, then ops/s. */
  private static double[] stats(long[] nanos, int n, long wallNanos) {
    long[] sorted = Arrays.copyOf(nanos, n);
    Arrays.sort(sorted);
    double mean = Arrays.stream(sorted).average().orElse(0) / 1e6;
    return new double[] {pct(sorted, 0.50), pct(sorted, 0.90), pct(sorted, 0.99), mean, n / (wallNanos / 1e9)};
  }

  private static double pct(long[] sorted, double p) {
    return Percentiles.nearestRank(sorted, p) / 1e6;
  }

  private String report(Target tabula, Target emulator) {
    StringBuilder s = new StringBuilder();
    s.append("# Cloud Bigtable API latency: Tabula vs Google's emulator\n\n");
    s.append(ResultsFile.machineLine());
    s.append("Command: `").append(ResultsFile.command(ApiLatencyBench.class, spec)).append("`\n\n");
    s.append(String.format(Locale.ROOT, "%,d timed calls per RPC and target, one at a time (latency, not throughput), "
        + "after %,d warm-up calls each; the targets took turns in %d rounds. Values of %,d bytes; every MutateRow "
        + "writes a new row, every ReadRows (`readRow`) reads one row that exists, chosen uniformly. Official Java "
        + "client (`newBuilderForEmulator`) on 127.0.0.1 for both; Tabula runs in this JVM, the emulator in its own "
        + "process.%n%n", ops, warmup, rounds, valueBytes));
    s.append("| RPC | Target | p50 ms | p90 ms | p99 ms | mean ms | ops/s |\n");
    s.append("|---|---|---:|---:|---:|---:|---:|\n");
    row(s, "MutateRow", tabula.peer.name(), stats(tabula.mutate, tabula.count, tabula.mutateWallNanos),
        stats(emulator.mutate, emulator.count, emulator.mutateWallNanos), emulator.peer.name());
    row(s, "ReadRows (point)", tabula.peer.name(), stats(tabula.read, tabula.count, tabula.readWallNanos),
        stats(emulator.read, emulator.count, emulator.readWallNanos), emulator.peer.name());
    s.append("\nRatio rows are Tabula divided by the emulator: above 1 in the latency columns means Tabula is slower, "
        + "above 1 in ops/s means Tabula is faster.\n\n");
    s.append("**Not like for like on durability:** Tabula acknowledges a MutateRow only after its commit log has "
        + "fsynced it (group commit: concurrent writes share one fsync, but here calls are one at a time, so every "
        + "write pays a full fsync), while the emulator keeps everything in memory and never touches the disk. "
        + "The data set is a few MB, under Tabula's default 64 MiB memtable, so its reads are served from memory "
        + "as the emulator's are.\n");
    return s.toString();
  }

  private static void row(StringBuilder s, String rpc, String tName, double[] t, double[] e, String eName) {
    s.append(String.format(Locale.ROOT, "| %s | %s | %.3f | %.3f | %.3f | %.3f | %,.0f |%n", rpc, tName, t[0], t[1],
        t[2], t[3], t[4]));
    s.append(String.format(Locale.ROOT, "| %s | %s | %.3f | %.3f | %.3f | %.3f | %,.0f |%n", rpc, eName, e[0], e[1],
        e[2], e[3], e[4]));
    s.append(String.format(Locale.ROOT, "| %s | **%s/%s** | %.2f | %.2f | %.2f | %.2f | %.2f |%n", rpc, tName, eName,
        t[0] / e[0], t[1] / e[1], t[2] / e[2], t[3] / e[3], t[4] / e[4]));
  }
}
