package io.tabula.bench.e2e;

import io.tabula.bench.ResultsFile;
import io.tabula.client.Filter;
import io.tabula.client.GcPolicy;
import io.tabula.client.Query;
import io.tabula.client.RowMutation;
import io.tabula.client.TabulaClient;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.LocalTime;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Flow;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * Recovery of a dead node (paper §5.2, §6): three nodes on this machine; table {@code t} of
 * {@code --tablets} tablets, all moved to n3, filled until n3's commit log holds about
 * {@code --log-mib} MiB that no flush has made obsolete; a second table {@code s}, on n1 and n2,
 * takes single-row writes through n1 throughout. Then n3 is killed ({@code kill -9}). Reported:
 * the time until every tablet of {@code t} answers a read again, where it went (detection,
 * fencing, sorting the log into pieces, placing, replaying; from the nodes' logs), the
 * survivors' write throughput around the kill, second by second, and that every row written
 * to {@code t} reads back. A benchmark, never a test.
 */
@Command(name = "run-recovery", mixinStandardHelpOptions = true, sortOptions = false,
    description = "Kill a node holding many tablets and a large commit log; time the recovery.")
public final class RecoveryBench implements Callable<Integer> {
  private static final Pattern LOG_TIME = Pattern.compile("^(\\d\\d:\\d\\d:\\d\\d\\.\\d\\d\\d) ");

  @Option(names = "--tablets", defaultValue = "100", description = "Tablets of the dead node; default: ${DEFAULT-VALUE}")
  private int tablets;

  @Option(names = "--log-mib", defaultValue = "1024",
      description = "MiB of values written to them before the kill; default: ${DEFAULT-VALUE}")
  private int logMib;

  @Option(names = "--value-bytes", defaultValue = "1000", description = "Value size; default: ${DEFAULT-VALUE}")
  private int valueBytes;

  @Option(names = "--victim-heap", defaultValue = "4g", description = "n3's heap; default: ${DEFAULT-VALUE}")
  private String victimHeap;

  @Option(names = "--hdfs", description = "Put the nodes' storage root on HDFS (Hadoop's in-process cluster in "
      + "this JVM) instead of local files")
  private boolean hdfs;

  @Option(names = "--out", defaultValue = "bench/results/run-recovery.md",
      description = "Report file; default: ${DEFAULT-VALUE}")
  private Path out;

  @Spec
  private CommandSpec spec;

  public static void main(String[] args) {
    System.exit(new CommandLine(new RecoveryBench()).execute(args));
  }

  @Override
  public Integer call() throws Exception {
    Path config = Files.createTempFile("tabula-recovery-", ".conf");
    // No balancing (n3 keeps the tablets it is given), and memtables large enough that nothing
    // written to t is flushed before the kill: all of it is only in n3's commit log.
    io.tabula.persistence.storage.HdfsStorage root = hdfs ? io.tabula.bench.BenchHdfs.newFolder() : null;
    Files.writeString(config, """
        tabula.master.balance-every = 1h
        tabula.node.memtable-budget = "70%"
        tabula.node.memtable-bytes = 256MiB
        """ + (root == null ? "" : "tabula.node.storage-uri = \"" + root.uri() + "\"\n"));
    // The nodes log at INFO: the recovery's steps are read from their logs.
    String victimOpts = "-Xms" + victimHeap + " -Xmx" + victimHeap + " -XX:+UseG1GC -Dtabula.bench.log-level=INFO";
    try (BenchCluster cluster = BenchCluster.start(3, node -> node.equals("n3") ? victimOpts
        : "-Xms1g -Xmx1g -XX:+UseG1GC -Dtabula.bench.log-level=INFO", List.of("--config", config.toString()))) {
      long rows = (long) logMib * 1024 * 1024 / valueBytes;
      createAndPlace(cluster, "t", tablets, "n3");
      createAndPlace(cluster, "s", 6, null);
      long fillStart = System.nanoTime();
      fill(cluster, rows);
      double fillSeconds = (System.nanoTime() - fillStart) / 1e9;
      long logBytes = logBytes(root != null ? root
          : new io.tabula.persistence.storage.FileStorage(cluster.root.resolve("data")), "n3.");
      System.err.printf(Locale.ROOT, "wrote %,d rows to t in %.1f s; n3's commit log holds %,d MiB%n", rows,
          fillSeconds, logBytes >> 20);

      Map<Long, Long> writesPerSecond = new ConcurrentHashMap<>();
      AtomicBoolean stop = new AtomicBoolean();
      long[] killedAt = {0};
      Thread background = backgroundWrites(cluster, writesPerSecond, stop, killedAt);
      TimeUnit.SECONDS.sleep(5);
      LocalTime killClock = LocalTime.now();
      killedAt[0] = System.nanoTime();
      cluster.kill(2);
      System.err.println("killed n3");
      long served = awaitServing(cluster, rows);
      TimeUnit.SECONDS.sleep(10);
      stop.set(true);
      background.join(30_000);
      long readBack = countRows(cluster, "t");
      Map<String, Long> steps = steps(cluster, killClock);
      String report = report(rows, fillSeconds, logBytes, served, steps, writesPerSecond, readBack);
      System.out.println(report);
      ResultsFile.write(out, report);
      return readBack == rows ? 0 : 1;
    } finally {
      io.tabula.bench.BenchHdfs.stop(); // after the nodes stopped
    }
  }

  /** Creates {@code table} split into {@code n} tablets; moves them all to {@code to} (null: off n3). */
  private void createAndPlace(BenchCluster cluster, String table, int n, String to) throws Exception {
    List<byte[]> splits = new ArrayList<>();
    for (int i = 1; i < n; i++) {
      splits.add(String.format("r%03d", i).getBytes(java.nio.charset.StandardCharsets.UTF_8));
    }
    try (TabulaClient admin = TabulaClient.connect(cluster.endpoint(0))) {
      admin.admin().createTable(table, Map.of(ClientUnderTest.FAMILY, GcPolicy.maxVersions(1)), splits)
          .toCompletableFuture().get(60, TimeUnit.SECONDS);
    }
    cluster.awaitReady();
    int i = 0;
    for (String[] t : cluster.tablets(table)) {
      String target = to != null ? to : List.of("n1", "n2").get(i++ % 2);
      if (to != null ? !t[1].equals(to) : t[1].equals("n3")) {
        cluster.post("/tabula/tablets/" + t[0] + "/move?to=" + target);
        cluster.awaitServingAt(table, t[0], target);
      }
    }
    System.err.printf("table %s: %d tablets placed%n", table, cluster.tablets(table).size());
  }

  private static String key(long i, int tablets) {
    return String.format("r%03d-%09d", i % tablets, i);
  }

  /** Writes rows 0..rows-1 of t, 200 per batch, 8 batches in flight, through the Tabula client (to n3). */
  private void fill(BenchCluster cluster, long rows) throws Exception {
    String value = "v".repeat(valueBytes);
    Semaphore inFlight = new Semaphore(8);
    AtomicLong failed = new AtomicLong();
    try (TabulaClient c = TabulaClient.connect(cluster.endpoint(0))) {
      for (long from = 0; from < rows; from += 200) {
        List<RowMutation> batch = new ArrayList<>();
        for (long i = from; i < Math.min(rows, from + 200); i++) {
          batch.add(RowMutation.create(key(i, tablets)).setCell(ClientUnderTest.FAMILY, "q", 1000L, value));
        }
        inFlight.acquire();
        c.applyBatch("t", batch).whenComplete((r, err) -> {
          if (err != null || r.stream().anyMatch(m -> !m.ok())) {
            failed.incrementAndGet();
          }
          inFlight.release();
        });
      }
      inFlight.acquire(8);
    }
    if (failed.get() > 0) {
      throw new IOException(failed.get() + " batches written to t failed");
    }
  }

  /** Single-row writes to s through n1, counted per second relative to the kill (before it: negative). */
  private Thread backgroundWrites(BenchCluster cluster, Map<Long, Long> perSecond, AtomicBoolean stop,
      long[] killedAt) {
    Thread t = new Thread(() -> {
      try (TabulaClient c = TabulaClient.builder().endpoint(cluster.endpoint(0)).deadline(Duration.ofSeconds(2))
          .build()) {
        Semaphore inFlight = new Semaphore(16);
        for (long i = 0; !stop.get(); i++) {
          inFlight.acquire();
          c.apply("s", RowMutation.create(key(i, 6)).setCell(ClientUnderTest.FAMILY, "q", 1000L, "x"))
              .whenComplete((ok, err) -> {
                inFlight.release();
                if (err == null) {
                  long since = System.nanoTime() - (killedAt[0] == 0 ? System.nanoTime() + 1 : killedAt[0]);
                  perSecond.merge(Math.floorDiv(since, 1_000_000_000L), 1L, Long::sum);
                }
              });
        }
        inFlight.acquire(16);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }, "background-writes");
    t.start();
    return t;
  }

  /** Reads one row of every tablet of t through n1 until each answers; returns ms from the kill to the last. */
  private long awaitServing(BenchCluster cluster, long rows) throws Exception {
    long start = System.nanoTime();
    List<Integer> waiting = new ArrayList<>();
    for (int i = 0; i < tablets; i++) {
      waiting.add(i);
    }
    try (TabulaClient c = TabulaClient.builder().endpoint(cluster.endpoint(0)).deadline(Duration.ofSeconds(1))
        .build()) {
      while (!waiting.isEmpty()) {
        if (System.nanoTime() - start > TimeUnit.SECONDS.toNanos(300)) {
          throw new IOException("tablets of t still not served 300 s after the kill: " + waiting);
        }
        List<CompletableFuture<Optional<io.tabula.client.Row>>> probes = new ArrayList<>();
        for (int i : waiting) {
          probes.add(c.readRow("t", key(i, tablets)).toCompletableFuture().exceptionally(err -> null));
        }
        List<Integer> still = new ArrayList<>();
        for (int j = 0; j < probes.size(); j++) {
          Optional<io.tabula.client.Row> r = probes.get(j).join();
          if (r == null || r.isEmpty()) {
            still.add(waiting.get(j));
          }
        }
        waiting = still;
        if (!waiting.isEmpty()) {
          TimeUnit.MILLISECONDS.sleep(100);
        }
      }
    }
    return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
  }

  /** Rows of {@code table}, read back through n1 (keys only: the values stripped). */
  private static long countRows(BenchCluster cluster, String table) throws Exception {
    CompletableFuture<Long> counted = new CompletableFuture<>();
    try (TabulaClient c = TabulaClient.connect(cluster.endpoint(0))) {
      c.scan(Query.table(table).filter(Filter.stripValue())).subscribe(new Flow.Subscriber<>() {
        private long n;
        private Flow.Subscription subscription;

        @Override
        public void onSubscribe(Flow.Subscription s) {
          subscription = s;
          s.request(1024);
        }

        @Override
        public void onNext(io.tabula.client.Row row) {
          if (++n % 1024 == 0) {
            subscription.request(1024);
          }
        }

        @Override
        public void onError(Throwable t) {
          counted.completeExceptionally(t);
        }

        @Override
        public void onComplete() {
          counted.complete(n);
        }
      });
      return counted.get(600, TimeUnit.SECONDS);
    }
  }

  /**
   * Bytes the commit-log segments in the root's folders {@code logs/<prefix>*} hold: each up to
   * its last byte that is not zero, since a prepared segment is zeros after its last batch.
   */
  private static long logBytes(io.tabula.persistence.storage.Storage root, String prefix) throws IOException {
    long sum = 0;
    for (String folder : root.list("logs")) {
      if (folder.startsWith(prefix)) {
        for (String f : root.list("logs/" + folder)) {
          if (f.endsWith(".log")) {
            try (io.tabula.persistence.storage.ReadableFile r = root.open("logs/" + folder + "/" + f)) {
              sum += withoutZeroTail(r);
            }
          }
        }
      }
    }
    return sum;
  }

  /** The length of {@code f} without the zeros it ends in. */
  private static long withoutZeroTail(io.tabula.persistence.storage.ReadableFile f) throws IOException {
    long end = f.size();
    byte[] chunk = new byte[1 << 16];
    while (end > 0) {
      int n = (int) Math.min(chunk.length, end);
      f.readFully(end - n, chunk, 0, n);
      for (int i = n - 1; i >= 0; i--) {
        if (chunk[i] != 0) {
          return end - n + i + 1;
        }
      }
      end -= n;
    }
    return 0;
  }

  /** When each recovery step happened, in ms after the kill, from the survivors' logs. */
  private static Map<String, Long> steps(BenchCluster cluster, LocalTime kill) throws IOException {
    Map<String, Long> steps = new TreeMap<>();
    Map<String, Pattern> marks = Map.of(
        "1 marked unreachable", Pattern.compile("Marking node as UNREACHABLE|Marking node\\(s\\) as UNREACHABLE"),
        "2 fencing began", Pattern.compile("fencing node n3"),
        "3 log sorted into pieces", Pattern.compile("segments of node n3's commit log into recovery pieces"),
        "4 first tablet placed", Pattern.compile("placing .*(owner was 'n3'|no live owner)"),
        "5 last tablet replayed", Pattern.compile("replayed \\d+ records from the logs \\[n3\\."));
    for (int node = 0; node < 2; node++) {
      for (String line : cluster.log(node)) {
        Matcher time = LOG_TIME.matcher(line);
        if (!time.find()) {
          continue;
        }
        long ms = Duration.between(kill, LocalTime.parse(time.group(1))).toMillis();
        if (ms < 0) {
          continue;
        }
        for (Map.Entry<String, Pattern> m : marks.entrySet()) {
          if (m.getValue().matcher(line).find()) {
            boolean last = m.getKey().startsWith("5");
            steps.merge(m.getKey(), ms, last ? Math::max : Math::min);
          }
        }
      }
    }
    return steps;
  }

  private String report(long rows, double fillSeconds, long logBytes, long served, Map<String, Long> steps,
      Map<Long, Long> perSecond, long readBack) {
    StringBuilder sb = new StringBuilder("# Recovery of a dead node (bench/run-recovery)\n\n");
    sb.append("Command: `").append(ResultsFile.command(RecoveryBench.class, spec)).append("`\n\n");
    sb.append(String.format(Locale.ROOT, "Three nodes on one machine, their storage root %s. Table t: %d tablets, all on n3, %,d rows of %d "
        + "bytes written in %.1f s, none flushed: n3's commit log held **%,d MiB** when n3 was killed (`kill -9`).%n%n",
        hdfs ? "on HDFS (Hadoop's in-process cluster, one datanode)" : "on local files", tablets, rows, valueBytes,
        fillSeconds, logBytes >> 20));
    sb.append(String.format(Locale.ROOT, "**Every tablet of t answered a read again %.1f s after the kill**; %,d of "
        + "%,d rows read back afterwards.%n%n", served / 1e3, readBack, rows));
    sb.append("| step (survivors' logs) | ms after the kill |\n|---|---:|\n");
    steps.forEach((k, v) -> sb.append("| ").append(k.substring(2)).append(" | ").append(v).append(" |\n"));
    sb.append("| every tablet of t answered a read (client) | ").append(served).append(" |\n\n");
    sb.append("Single-row writes to table s (on n1 and n2) through n1, 16 in flight, per second:\n\n");
    sb.append("| second after the kill | writes acknowledged |\n|---:|---:|\n");
    new TreeMap<>(perSecond).forEach((s, n) -> {
      if (s >= -5 && s <= 20) {
        sb.append("| ").append(s).append(" | ").append(n).append(" |\n");
      }
    });
    return sb.toString();
  }
}
