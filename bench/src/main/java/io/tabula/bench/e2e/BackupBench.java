package io.tabula.bench.e2e;

import com.google.cloud.bigtable.admin.v2.BigtableTableAdminClient;
import com.google.cloud.bigtable.admin.v2.models.Backup;
import com.google.cloud.bigtable.admin.v2.models.CreateBackupRequest;
import com.google.cloud.bigtable.admin.v2.models.CreateTableRequest;
import com.google.cloud.bigtable.admin.v2.models.RestoreTableRequest;
import com.google.cloud.bigtable.data.v2.BigtableDataClient;
import com.google.cloud.bigtable.data.v2.models.BulkMutation;
import com.google.cloud.bigtable.data.v2.models.Query;
import com.google.cloud.bigtable.data.v2.models.RowMutation;
import com.google.cloud.bigtable.data.v2.models.TableId;
import com.google.protobuf.ByteString;
import io.tabula.bench.ResultsFile;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;
import java.util.concurrent.Callable;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * What a backup and a restore cost (docs/backups.md), never part of the test verdict: one node
 * process with its defaults; a table of {@code --gb} GB of 1,000-byte values loaded untimed
 * (then left to settle), then single-row writes and reads through Google's official Java
 * client run before, during and after {@code CreateBackup} and {@code RestoreTable}. Reported:
 * each call's seconds, the bytes the backup names and the bytes written on the storage root
 * while it ran (the flushes and the manifest: nothing is copied), and the foreground values/s
 * in the window before each call and while it ran, side by side. Timing starts after the
 * node's {@code /ready}.
 */
@Command(name = "run-backup", mixinStandardHelpOptions = true, sortOptions = false,
    description = "Back up and restore a large table under single-row load; time both, count the bytes.")
public final class BackupBench implements Callable<Integer> {
  @Option(names = "--gb", defaultValue = "10", description = "GB of values in the table; default: ${DEFAULT-VALUE}")
  private double gb;

  @Option(names = "--tablets", defaultValue = "40", description = "Tablets of the table (initial splits); default: ${DEFAULT-VALUE}")
  private int tablets;

  @Option(names = "--window-seconds", defaultValue = "10",
      description = "The foreground window before each call; default: ${DEFAULT-VALUE}")
  private int windowSeconds;

  @Option(names = "--settle-seconds", defaultValue = "60",
      description = "Untimed pause after the load, for flushes and compactions; default: ${DEFAULT-VALUE}")
  private int settleSeconds;

  @Option(names = "--node-java-opts", defaultValue = "-Xms2g -Xmx2g -XX:+UseG1GC",
      description = "The node's JVM options; default: ${DEFAULT-VALUE}")
  private String nodeJavaOpts;

  @Option(names = "--out", description = "Markdown report written here too (default: printed only)")
  private Path out;

  private static final int VALUE_BYTES = 1000;
  private static final int BATCH = 200;

  public static void main(String[] args) {
    System.exit(new CommandLine(new BackupBench()).execute(args));
  }

  @Override
  public Integer call() throws Exception {
    long rows = (long) (gb * 1e9 / VALUE_BYTES);
    StringBuilder report = new StringBuilder();
    try (NodeProcess node = NodeProcess.start("", List.of(nodeJavaOpts.split(" ")), Duration.ofMinutes(2))) {
      node.awaitReady(Duration.ofMinutes(2));
      OfficialEndpoint endpoint = OfficialEndpoint.plaintext(node.port());
      try (BigtableTableAdminClient admin = endpoint.admin();
          BigtableDataClient data = BigtableDataClient.create(endpoint.dataSettings().build())) {
        CreateTableRequest create = CreateTableRequest.of("big").addFamily("f");
        for (int i = 1; i < tablets; i++) {
          create.addSplit(ByteString.copyFromUtf8(key(rows * i / tablets)));
        }
        admin.createTable(create);
        long loadStart = System.nanoTime();
        load(data, rows);
        double loadSeconds = (System.nanoTime() - loadStart) / 1e9;
        System.out.printf(Locale.ROOT, "loaded %,d rows (%.1f GB) in %.0f s; settling %d s%n", rows, gb, loadSeconds,
            settleSeconds);
        Thread.sleep(settleSeconds * 1000L);
        long rootBefore = bytesUnder(node.dataDir());

        Foreground fg = new Foreground(data, rows);
        fg.start();
        try {
          Thread.sleep(windowSeconds * 1000L);
          Rate before = fg.rate();
          long t0 = System.nanoTime();
          Backup b = admin.createBackup(CreateBackupRequest.of("tabula", "bench").setSourceTableId("big")
              .setExpireTime(org.threeten.bp.Instant.now().plusSeconds(7 * 86_400)));
          double backupSeconds = (System.nanoTime() - t0) / 1e9;
          Rate during = fg.rate();
          long written = bytesUnder(node.dataDir()) - rootBefore;
          Thread.sleep(windowSeconds * 1000L);
          Rate beforeRestore = fg.rate();
          long t1 = System.nanoTime();
          admin.restoreTable(RestoreTableRequest.of("tabula", "bench").setTableId("big-restored"));
          double restoreSeconds = (System.nanoTime() - t1) / 1e9;
          Rate duringRestore = fg.rate();
          long t2 = System.nanoTime();
          long restored = 0;
          for (var r : data.readRows(Query.create(TableId.of("big-restored")).limit(100_000))) {
            restored++;
          }
          double firstReadSeconds = (System.nanoTime() - t2) / 1e9;

          report.append(String.format(Locale.ROOT, """
              # What a backup and a restore cost

              Command: `%s`

              One node (`%s`), its defaults; table `big` of %,d rows of %d-byte values (%.1f GB) in %d
              tablets, loaded untimed in %.0f s with batches of %d, then %d s to settle. Foreground:
              single-row writes and reads through the official Java client (64 in flight), measured
              over the %d s before each call and while it ran.

              | | seconds | foreground values/s before | during | during / before |
              |---|---:|---:|---:|---:|
              | CreateBackup | %.2f | %,.0f | %,.0f | %.2f |
              | RestoreTable | %.2f | %,.0f | %,.0f | %.2f |

              - The backup names %,d bytes of SSTables (`size_bytes`); the storage root grew by %,d bytes
                while it was taken (the memtables' flushes, the disowning manifests and the backup's own;
                the foreground's writes too). Nothing is copied.
              - The restored table answered its first 100,000 rows (%,d read) %.2f s after RestoreTable returned.
              """, System.getenv().getOrDefault("BENCH_COMMAND", "bench/run-backup"), nodeJavaOpts, rows, VALUE_BYTES, gb,
              tablets, loadSeconds, BATCH, settleSeconds, windowSeconds, backupSeconds, before.perSecond(),
              during.perSecond(), during.perSecond() / before.perSecond(), restoreSeconds,
              beforeRestore.perSecond(), duringRestore.perSecond(),
              duringRestore.perSecond() / beforeRestore.perSecond(), b.getSizeBytes(), written, restored,
              firstReadSeconds));
        } finally {
          fg.stop();
        }
      }
    }
    System.out.println(report);
    if (out != null) {
      ResultsFile.write(out, report.toString());
    }
    return 0;
  }

  private static String key(long i) {
    return String.format("row%012d", i);
  }

  private static void load(BigtableDataClient data, long rows) {
    byte[] value = new byte[VALUE_BYTES];
    new SplittableRandom(42).nextBytes(value);
    ByteString v = ByteString.copyFrom(value);
    List<com.google.api.core.ApiFuture<Void>> inFlight = new ArrayList<>();
    for (long i = 0; i < rows; i += BATCH) {
      BulkMutation bulk = BulkMutation.create(TableId.of("big"));
      for (long j = i; j < Math.min(rows, i + BATCH); j++) {
        bulk.add(key(j), com.google.cloud.bigtable.data.v2.models.Mutation.create().setCell("f",
            ByteString.copyFromUtf8("q"), 1000, v));
      }
      inFlight.add(data.bulkMutateRowsAsync(bulk));
      if (inFlight.size() == 32) {
        await(inFlight);
      }
    }
    await(inFlight);
  }

  /** Waits for every batch of {@code inFlight}, then empties it; a batch that failed fails the load. */
  private static void await(List<com.google.api.core.ApiFuture<Void>> inFlight) {
    try {
      for (com.google.api.core.ApiFuture<Void> f : inFlight) {
        f.get();
      }
    } catch (java.util.concurrent.ExecutionException e) {
      throw new IllegalStateException("the load failed", e.getCause());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("the load was interrupted", e);
    }
    inFlight.clear();
  }

  private static long bytesUnder(Path dir) throws IOException {
    try (Stream<Path> files = Files.walk(dir)) {
      return files.filter(Files::isRegularFile).mapToLong(p -> {
        try {
          return Files.size(p);
        } catch (IOException gone) {
          return 0; // deleted meanwhile (a compaction's input, a log segment)
        }
      }).sum();
    }
  }

  /** Values done since the last look, over the time since then. */
  private record Rate(double perSecond) {}

  /** Single-row writes and reads with 64 in flight from one thread, until stopped; counts what is answered. */
  private static final class Foreground {
    private final BigtableDataClient data;
    private final long rows;
    private final AtomicBoolean stop = new AtomicBoolean();
    private final AtomicLong done = new AtomicLong();
    private final Thread thread;
    private long lastCount;
    private long lastNanos;

    Foreground(BigtableDataClient data, long rows) {
      this.data = data;
      this.rows = rows;
      this.thread = new Thread(this::run, "foreground");
    }

    void start() {
      lastNanos = System.nanoTime();
      thread.start();
    }

    Rate rate() {
      long now = System.nanoTime();
      long count = done.get();
      Rate r = new Rate((count - lastCount) / ((now - lastNanos) / 1e9));
      lastCount = count;
      lastNanos = now;
      return r;
    }

    void stop() throws InterruptedException {
      stop.set(true);
      thread.join(60_000);
    }

    private void run() {
      SplittableRandom random = new SplittableRandom(7);
      java.util.concurrent.Semaphore slots = new java.util.concurrent.Semaphore(64);
      ByteString value = ByteString.copyFrom(new byte[VALUE_BYTES]);
      while (!stop.get()) {
        slots.acquireUninterruptibly();
        String k = key(random.nextLong(rows));
        com.google.api.core.ApiFuture<?> f = random.nextBoolean()
            ? data.mutateRowAsync(RowMutation.create(TableId.of("big"), k).setCell("f", ByteString.copyFromUtf8("q"),
                2000, value))
            : data.readRowAsync(TableId.of("big"), k);
        f.addListener(() -> {
          done.incrementAndGet();
          slots.release();
        }, com.google.common.util.concurrent.MoreExecutors.directExecutor());
      }
      slots.acquireUninterruptibly(64);
    }
  }
}
