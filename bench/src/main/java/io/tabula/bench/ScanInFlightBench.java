package io.tabula.bench;

import com.google.api.gax.rpc.ResponseObserver;
import com.google.api.gax.rpc.StreamController;
import com.google.cloud.bigtable.data.v2.models.BulkMutation;
import com.google.cloud.bigtable.data.v2.models.Mutation;
import com.google.cloud.bigtable.data.v2.models.Query;
import com.google.cloud.bigtable.data.v2.models.Row;
import com.google.cloud.bigtable.data.v2.models.RowCell;
import com.google.cloud.bigtable.data.v2.models.TableId;
import com.google.protobuf.ByteString;
import com.google.protobuf.UnsafeByteOperations;
import io.tabula.streams.scan.TabletScans;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * How far an in-process Tabula node reads ahead of a slow ReadRows consumer: the official
 * client takes a few rows one at a time and then stops asking; the server's rows emitted
 * from the engine ({@link TabletScans#BYTES_EMITTED}) minus the bytes the client consumed
 * is what is in flight (server stream buffers, HTTP/2 windows, client buffers). Then the
 * stream is cancelled and the counter must stop growing. A benchmark, never a test.
 */
@Command(name = "scan-in-flight", mixinStandardHelpOptions = true, sortOptions = false,
    description = "Bytes a Tabula ReadRows stream reads ahead of a slow consumer, and whether cancel stops it.")
public final class ScanInFlightBench implements Callable<Integer> {
  static final String TABLE = "scan";
  static final String FAMILY = "f";
  static final ByteString QUALIFIER = ByteString.copyFromUtf8("v");
  /** What the first, naive ReadRows stream buffered against a consumer that took 20 rows. */
  static final double NAIVE_MB = 17.0;

  @Option(names = "--rows", description = "Rows in the table; default: ${DEFAULT-VALUE}", defaultValue = "20000")
  private int rows;

  @Option(names = "--value-bytes", description = "Bytes of every value; default: ${DEFAULT-VALUE}",
      defaultValue = "1000")
  private int valueBytes;

  @Option(names = "--consume", description = "Rows the client takes, one at a time, before it stops asking; "
      + "default: ${DEFAULT-VALUE}", defaultValue = "20")
  private int consume;

  @Option(names = "--pause-ms", description = "How long the client then stops asking; default: ${DEFAULT-VALUE}",
      defaultValue = "3000")
  private long pauseMs;

  @Option(names = "--resume", description = "Rows the client then takes at full speed before it cancels; "
      + "default: ${DEFAULT-VALUE}", defaultValue = "5000")
  private int resume;

  @Option(names = "--memtable-mb", description = "Tabula memtable size, so most rows are read from SSTables on "
      + "disk; default: ${DEFAULT-VALUE}", defaultValue = "4")
  private int memtableMb;

  @Option(names = "--quick", description = "Accepted for symmetry with the API latency bench; the default sizes "
      + "are already quick.")
  private boolean quick;

  @Option(names = "--out", description = "Markdown result file; default: ${DEFAULT-VALUE}",
      defaultValue = "bench/results/scan-in-flight.md")
  private Path out;

  @CommandLine.Spec
  private CommandLine.Model.CommandSpec spec;

  public static void main(String[] args) {
    System.exit(new CommandLine(new ScanInFlightBench()).execute(args));
  }

  /** Client-side consumer with manual flow control: one row per request. */
  private static final class SlowConsumer implements ResponseObserver<Row> {
    final AtomicReference<StreamController> controller = new AtomicReference<>();
    final AtomicLong rows = new AtomicLong();
    final AtomicLong bytes = new AtomicLong();
    final AtomicReference<Throwable> error = new AtomicReference<>();
    final CountDownLatch done = new CountDownLatch(1);
    final CountDownLatch reachedTarget = new CountDownLatch(1);
    final CountDownLatch cancelled = new CountDownLatch(1);
    final int target;
    /** Once set, the consumer takes rows as fast as they come and cancels at this many. */
    volatile long cancelAt = Long.MAX_VALUE;
    /** Set just before this consumer cancels the stream itself. */
    volatile boolean cancelling;
    /** The server's row count (since {@code rows0}) at the moment of cancelling. */
    volatile long serverRowsAtCancel = -1;
    long rows0;

    SlowConsumer(int target) {
      this.target = target;
    }

    @Override
    public void onStart(StreamController c) {
      c.disableAutoInboundFlowControl();
      controller.set(c);
      c.request(1);
    }

    @Override
    public void onResponse(Row row) {
      long b = row.getKey().size();
      for (RowCell cell : row.getCells()) {
        b += cell.getQualifier().size() + cell.getValue().size();
      }
      bytes.addAndGet(b);
      long n = rows.incrementAndGet();
      if (n >= cancelAt) {
        serverRowsAtCancel = TabletScans.ROWS_EMITTED.sum() - rows0;
        cancelling = true;
        controller.get().cancel();
        cancelled.countDown();
      } else if (n < target || cancelAt != Long.MAX_VALUE) {
        controller.get().request(1);
      } else {
        reachedTarget.countDown();
      }
    }

    @Override
    public void onError(Throwable t) {
      // After our own cancel() gax reports a CancellationException: the expected end, not a failure.
      if (!(cancelling && t instanceof CancellationException)) {
        error.set(t);
      }
      reachedTarget.countDown();
      cancelled.countDown();
      done.countDown();
    }

    @Override
    public void onComplete() {
      cancelled.countDown();
      reachedTarget.countDown();
      done.countDown();
    }
  }

  @Override
  public Integer call() throws Exception {
    if (rows < 1 || valueBytes < 1 || consume < 1 || resume < 1 || pauseMs < 0) {
      throw new CommandLine.ParameterException(spec.commandLine(),
          "--rows, --value-bytes, --consume and --resume must be positive, --pause-ms must not be negative");
    }
    Dataset data = new Dataset(rows, valueBytes, 42);
    try (ApiPeer tabula = ApiPeer.tabula(Map.of("memtable-bytes", memtableMb + "MiB"))) {
      tabula.createTable(TABLE, FAMILY);
      long loadStart = System.nanoTime();
      load(tabula, data);
      double loadSeconds = (System.nanoTime() - loadStart) / 1e9;
      System.err.printf(Locale.ROOT, "loaded %,d rows in %.1f s; waiting for flushes%n", rows, loadSeconds);
      Thread.sleep(3_000);

      long rows0 = TabletScans.ROWS_EMITTED.sum();
      long bytes0 = TabletScans.BYTES_EMITTED.sum();
      SlowConsumer consumer = new SlowConsumer(consume);
      consumer.rows0 = rows0;
      tabula.data().readRowsCallable().call(Query.create(TableId.of(TABLE)), consumer);
      if (!consumer.reachedTarget.await(30, TimeUnit.SECONDS)) {
        throw new IllegalStateException("the client did not receive " + consume + " rows in 30 s");
      }
      if (consumer.error.get() != null) {
        throw new IllegalStateException("ReadRows failed", consumer.error.get());
      }
      if (consumer.done.getCount() == 0) {
        throw new IllegalStateException("the stream ended after " + consumer.rows.get() + " rows; use more --rows");
      }
      // The client now stops asking. Sample the server's read-ahead while it is paused.
      List<long[]> samples = new ArrayList<>();
      long pauseStart = System.nanoTime();
      for (long at : new long[] {pauseMs / 6, pauseMs / 3, pauseMs * 2 / 3, pauseMs}) {
        long sleep = at - (System.nanoTime() - pauseStart) / 1_000_000;
        if (sleep > 0) {
          Thread.sleep(sleep);
        }
        samples.add(new long[] {at, TabletScans.ROWS_EMITTED.sum() - rows0, TabletScans.BYTES_EMITTED.sum() - bytes0});
      }
      long[] last = samples.get(samples.size() - 1);
      long clientRows = consumer.rows.get();
      long clientBytes = consumer.bytes.get();
      long inFlightRows = last[1] - clientRows;
      long inFlightBytes = last[2] - clientBytes;

      // Resume: take rows as fast as they come, so the server is reading, and cancel mid-stream.
      consumer.cancelAt = clientRows + resume;
      consumer.controller.get().request(1);
      if (!consumer.cancelled.await(60, TimeUnit.SECONDS)) {
        throw new IllegalStateException("the client did not reach " + consumer.cancelAt + " rows in 60 s");
      }
      if (consumer.error.get() != null) {
        throw new IllegalStateException("ReadRows failed", consumer.error.get());
      }
      boolean completed = consumer.serverRowsAtCancel < 0;
      long atCancel = consumer.serverRowsAtCancel;
      Thread.sleep(1_000);
      long afterCancel1 = TabletScans.ROWS_EMITTED.sum() - rows0;
      Thread.sleep(2_000);
      long afterCancel2 = TabletScans.ROWS_EMITTED.sum() - rows0;
      long afterCancelBytes = TabletScans.BYTES_EMITTED.sum() - bytes0;

      String report = report(loadSeconds, samples, clientRows, clientBytes, inFlightRows, inFlightBytes, completed,
          consumer.cancelAt, atCancel, afterCancel1, afterCancel2, afterCancelBytes);
      System.out.print(report);
      ResultsFile.write(out, report);
      System.err.println("wrote " + out);
      return completed ? 1 : 0;
    }
  }

  private void load(ApiPeer tabula, Dataset data) {
    int batch = 500;
    for (int from = 0; from < rows; from += batch) {
      BulkMutation m = BulkMutation.create(TABLE);
      for (int i = from; i < Math.min(rows, from + batch); i++) {
        m.add(UnsafeByteOperations.unsafeWrap(data.key(i)),
            Mutation.create().setCell(FAMILY, QUALIFIER, 1_000L, UnsafeByteOperations.unsafeWrap(data.value(i))));
      }
      tabula.data().bulkMutateRows(m);
    }
  }

  private static String mb(long bytes) {
    return String.format(Locale.ROOT, "%.2f", bytes / 1e6);
  }

  private String report(double loadSeconds, List<long[]> samples, long clientRows, long clientBytes,
      long inFlightRows, long inFlightBytes, boolean completed, long cancelAt, long atCancel, long afterCancel1,
      long afterCancel2, long afterCancelBytes) {
    long rowBytes = (long) Dataset.KEY_BYTES + QUALIFIER.size() + valueBytes;
    StringBuilder s = new StringBuilder();
    s.append("# ReadRows read-ahead against a slow consumer (Tabula)\n\n");
    s.append(ResultsFile.machineLine());
    s.append("Command: `").append(ResultsFile.command(ScanInFlightBench.class, spec)).append("`\n\n");
    s.append(String.format(Locale.ROOT, "Table: %,d rows of one %,d-byte value (%s MB of key, qualifier and value "
        + "bytes), loaded with MutateRows in %.1f s into an in-process node with a %d MiB memtable, so most rows are "
        + "read from SSTables. The official Java client opens one ReadRows stream over the whole table with manual "
        + "flow control, takes %d rows one `request(1)` at a time, then stops asking for %,d ms; then it takes rows as fast as they come and "
        + "cancels the stream mid-table. Server side = rows "
        + "pulled from the engine by `TabletScans` (key + qualifier + value bytes); in flight = server side minus what "
        + "the client consumed.%n%n", rows, valueBytes, mb(rowBytes * rows), loadSeconds, memtableMb, consume,
        pauseMs));
    s.append("| Measure | Rows | MB |\n|---|---:|---:|\n");
    s.append(String.format(Locale.ROOT, "| Consumed by the client | %,d | %s |%n", clientRows, mb(clientBytes)));
    for (long[] p : samples) {
      s.append(String.format(Locale.ROOT, "| Read by the server, %,d ms into the pause | %,d | %s |%n", p[0], p[1],
          mb(p[2])));
    }
    s.append(String.format(Locale.ROOT, "| **In flight (server − client) after the pause** | **%,d** | **%s** |%n",
        inFlightRows, mb(inFlightBytes)));
    s.append(String.format(Locale.ROOT, "| Client resumes at full speed and cancels at row | %,d | |%n", cancelAt));
    s.append(String.format(Locale.ROOT, "| Read by the server at the cancel | %,d | |%n", atCancel));
    s.append(String.format(Locale.ROOT, "| Read by the server 1 s after cancel | %,d | |%n", afterCancel1));
    s.append(String.format(Locale.ROOT, "| Read by the server 3 s after cancel | %,d | %s |%n", afterCancel2,
        mb(afterCancelBytes)));
    s.append(String.format(Locale.ROOT, "| Whole table | %,d | %s |%n", rows, mb(rowBytes * rows)));
    s.append('\n');
    s.append(String.format(Locale.ROOT, "* Read-ahead bound: **%,d rows, %s MB** (%.1f%% of the table), versus ~%.0f MB "
        + "buffered by the first, naive stream in an earlier trial on this kind of machine (%s).%n", inFlightRows, mb(inFlightBytes),
        100.0 * (clientRows + inFlightRows) / rows, NAIVE_MB,
        inFlightBytes / 1e6 < NAIVE_MB ? String.format(Locale.ROOT, "%.1f× less", NAIVE_MB / (inFlightBytes / 1e6))
            : "no better"));
    long growth = samples.get(samples.size() - 1)[1] - samples.get(0)[1];
    s.append(String.format(Locale.ROOT, "* During the pause the server's count grew by %,d rows after the first "
        + "sample (%s).%n", growth, growth == 0 ? "back-pressure held: it stopped reading" : "it kept reading"));
    s.append(String.format(Locale.ROOT, "* Cancel while the server was reading: %,d rows at the cancel, %,d 1 s later, "
        + "%,d 3 s later, of %,d — %s.%n", atCancel, afterCancel1, afterCancel2, rows,
        afterCancel2 == afterCancel1 && afterCancel2 < rows ? "the counter stopped, cancellation stops disk reads"
            : "the counter did not stop before the end of the table"));
    if (completed) {
      s.append("* WARNING: the stream completed before the client cancelled it, so cancellation was not measured; "
          + "use more --rows or a smaller --resume.\n");
    }
    s.append("\nIn flight includes everything between the engine and the client's observer: the server's stream "
        + "stages and gRPC framing, the HTTP/2 flow-control windows on both sides and the client's own buffering.\n");
    return s.toString();
  }
}
