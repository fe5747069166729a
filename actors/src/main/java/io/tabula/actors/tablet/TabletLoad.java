package io.tabula.actors.tablet;

import com.google.errorprone.annotations.concurrent.GuardedBy;
import io.tabula.persistence.encoding.ByteArrays;
import io.tabula.persistence.model.Mutation;
import io.tabula.persistence.model.RowMutation;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.LongAdder;

/**
 * One served tablet's load: rows and bytes read and written since the tablet last reported
 * ({@link #take}), the same added to its table's running totals on this node
 * ({@link TableTotals}, for the node's metrics), and a sample of the row keys it was asked
 * for lately, from which a hot tablet picks the row that halves its load ({@link #splitRow}).
 *
 * <p>Thread-safe: reads count from whichever thread runs them (the blocking-I/O dispatcher,
 * the gRPC layer), writes from the tablet's actor. The counters are {@link LongAdder}s; one
 * request in {@value #SAMPLE_EVERY} (at random) also adds its row key to the sample, under the
 * sample's own lock, so the lock is taken rarely and briefly.
 */
public final class TabletLoad {
  /** On average one access in this many is sampled. */
  static final int SAMPLE_EVERY = 8;
  /** How many sampled keys are kept (the newest replace the oldest). */
  static final int SAMPLE_SIZE = 512;

  /** What a tablet did between two reports. */
  public record Taken(long rowsRead, long bytesRead, long rowsWritten, long bytesWritten) {}

  private final String tableName;
  private final TableTotals table;
  private final LongAdder rowsRead = new LongAdder();
  private final LongAdder bytesRead = new LongAdder();
  private final LongAdder rowsWritten = new LongAdder();
  private final LongAdder bytesWritten = new LongAdder();
  private final Object sampleLock = new Object();
  /** Made at the first key sampled: an idle tablet keeps none (2 KiB each, per open tablet). */
  @GuardedBy("sampleLock")
  private byte[][] sample;
  /** Where the next sampled key goes. */
  @GuardedBy("sampleLock")
  private int next;
  /** How many slots hold a key (at most SAMPLE_SIZE). */
  @GuardedBy("sampleLock")
  private int filled;
  /** The last report's figures per second: written by the tablet's actor, read by the metrics. */
  private volatile double[] lastRates = new double[4];

  TabletLoad(String tableName, TableTotals table) {
    this.tableName = tableName;
    this.table = table;
  }

  /** The table of the tablet. */
  public String table() {
    return tableName;
  }

  /** Counts a row read for key {@code key}, {@code bytes} returned (0: nothing passed the filter). */
  void read(byte[] key, long bytes) {
    rowsRead.increment();
    bytesRead.add(bytes);
    table.rowsRead.increment();
    table.bytesRead.add(bytes);
    maybeSample(key);
  }

  /** Counts a row mutation applied. */
  void written(RowMutation rm) {
    long bytes = bytesOf(rm);
    rowsWritten.increment();
    bytesWritten.add(bytes);
    table.rowsWritten.increment();
    table.bytesWritten.add(bytes);
    maybeSample(rm.row());
  }

  /** About how many bytes a row mutation carries: its key, and each change's qualifier and value. */
  static long bytesOf(RowMutation rm) {
    long n = rm.row().length;
    for (Mutation m : rm.mutations()) {
      n += 8 + (m instanceof Mutation.SetCell s ? s.qualifier().length + s.value().length : 0);
    }
    return n;
  }

  private void maybeSample(byte[] key) {
    if (ThreadLocalRandom.current().nextInt(SAMPLE_EVERY) != 0) {
      return;
    }
    synchronized (sampleLock) {
      if (sample == null) {
        sample = new byte[SAMPLE_SIZE][];
      }
      sample[next] = key;
      next = (next + 1) % SAMPLE_SIZE;
      filled = Math.min(SAMPLE_SIZE, filled + 1);
    }
  }

  /** What the tablet did since the last call, which starts the next count; {@code nanos} the time between. */
  Taken take(long nanos) {
    Taken t = new Taken(rowsRead.sumThenReset(), bytesRead.sumThenReset(), rowsWritten.sumThenReset(),
        bytesWritten.sumThenReset());
    double s = Math.max(1e-3, nanos / 1e9);
    lastRates = new double[] {t.rowsRead / s, t.bytesRead / s, t.rowsWritten / s, t.bytesWritten / s};
    return t;
  }

  /** Rows read, bytes read, rows written and bytes written per second over the last report's period. */
  public double[] lastRates() {
    return lastRates.clone();
  }

  /**
   * The row that halves the sampled load of the tablet {@code [start, end)}: the sampled keys
   * before it and from it on are each at least a quarter of the sample. Empty when the sample
   * is too small ({@value #SAMPLE_SIZE} / 8 keys) or one row carries most of it (no split
   * moves load off that row).
   */
  Optional<byte[]> splitRow(byte[] start, byte[] end) {
    List<byte[]> keys = new ArrayList<>();
    synchronized (sampleLock) {
      for (int i = 0; i < filled; i++) {
        keys.add(sample[i]);
      }
    }
    return halvingRow(keys, start, end);
  }

  /** The row {@link #splitRow} picks among {@code keys}. */
  static Optional<byte[]> halvingRow(List<byte[]> keys, byte[] start, byte[] end) {
    List<byte[]> in = new ArrayList<>();
    for (byte[] k : keys) {
      if (ByteArrays.compare(k, start) >= 0 && (end.length == 0 || ByteArrays.compare(k, end) < 0)) {
        in.add(k);
      }
    }
    int n = in.size();
    if (n < SAMPLE_SIZE / 8) {
      return Optional.empty();
    }
    in.sort(ByteArrays::compare);
    // The first key from which on at most half the sample lies, then the next distinct key if the
    // median row is so hot that nothing lies before it.
    int at = n / 2;
    while (at > 0 && Arrays.equals(in.get(at - 1), in.get(at))) {
      at--;
    }
    if (at < n / 4) {
      at = n / 2;
      while (at < n && Arrays.equals(in.get(at), in.get(n / 2))) {
        at++;
      }
    }
    if (at < n / 4 || n - at < n / 4 || ByteArrays.compare(in.get(at), start) <= 0) {
      return Optional.empty();
    }
    return Optional.of(in.get(at));
  }

  /**
   * One table's running totals on this node, over every tablet of it served here since the
   * node started: rows and bytes read and written. Thread-safe.
   */
  public static final class TableTotals {
    final LongAdder rowsRead = new LongAdder();
    final LongAdder bytesRead = new LongAdder();
    final LongAdder rowsWritten = new LongAdder();
    final LongAdder bytesWritten = new LongAdder();

    public long rowsRead() {
      return rowsRead.sum();
    }

    public long bytesRead() {
      return bytesRead.sum();
    }

    public long rowsWritten() {
      return rowsWritten.sum();
    }

    public long bytesWritten() {
      return bytesWritten.sum();
    }
  }
}
