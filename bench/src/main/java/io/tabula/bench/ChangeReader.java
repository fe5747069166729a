package io.tabula.bench;

import com.google.api.gax.rpc.ServerStream;
import com.google.cloud.bigtable.data.v2.BigtableDataClient;
import com.google.cloud.bigtable.data.v2.models.ChangeStreamContinuationToken;
import com.google.cloud.bigtable.data.v2.models.ChangeStreamMutation;
import com.google.cloud.bigtable.data.v2.models.ChangeStreamRecord;
import com.google.cloud.bigtable.data.v2.models.CloseStream;
import com.google.cloud.bigtable.data.v2.models.Heartbeat;
import com.google.cloud.bigtable.data.v2.models.Range.ByteStringRange;
import com.google.cloud.bigtable.data.v2.models.ReadChangeStreamQuery;
import com.google.protobuf.ByteString;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * One reader of a whole table's change stream through the official Java client, shaped for
 * measurement: each partition on a thread of its own holds one {@code ReadChangeStream} open
 * for as long as the stream lasts (no slicing, so the reader adds no resumes of its own). A
 * {@code CloseStream} (a split or a merge) is followed to its new partitions, a merged one
 * opened once the tokens of all its parents cover it. A stream that fails is opened again from
 * the last token it gave, and counted in {@link #reopened}.
 *
 * <p>Each change goes to the {@link Listener} on its partition's thread as the client hands it
 * over. Thread-safe; {@link #close} cancels the open streams and stops the threads.
 */
final class ChangeReader implements AutoCloseable {
  /** Told of each change as it arrives. */
  interface Listener {
    void changed(ChangeStreamMutation change);
  }

  /** A stream that fails this many times in a row, without a record in between, is given up. */
  private static final int MAX_FAILURES_IN_A_ROW = 10;

  private final BigtableDataClient data;
  private final String table;
  private final Duration heartbeat;
  private final Listener listener;
  private final ExecutorService pool = Executors.newCachedThreadPool(r -> {
    Thread t = new Thread(r, "change-reader");
    t.setDaemon(true);
    return t;
  });
  private final Set<ServerStream<ChangeStreamRecord>> open = ConcurrentHashMap.newKeySet();
  /** Tokens offered for a partition not yet covered, by the partition's start and end. */
  private final Map<List<ByteString>, List<ChangeStreamContinuationToken>> waiting = new HashMap<>();
  private final AtomicReference<RuntimeException> firstFailure = new AtomicReference<>();
  private volatile boolean stopped;

  final AtomicLong heartbeats = new AtomicLong();
  final AtomicInteger closeStreams = new AtomicInteger();
  final AtomicInteger reopened = new AtomicInteger();
  final AtomicInteger givenUp = new AtomicInteger();

  ChangeReader(BigtableDataClient data, String table, Duration heartbeat, Listener listener) {
    this.data = data;
    this.table = table;
    this.heartbeat = heartbeat;
    this.listener = listener;
  }

  /** Starts reading every partition the table has now from {@code from}. */
  void start(Instant from) {
    for (ByteStringRange p : data.generateInitialChangeStreamPartitions(table)) {
      pool.execute(() -> follow(p, from, List.of()));
    }
  }

  /** The first failure of any stream (each was opened again), if there was one. */
  RuntimeException firstFailure() {
    return firstFailure.get();
  }

  /** Reads {@code partition} from {@code tokens}, or from {@code from} when there are none, until it closes. */
  private void follow(ByteStringRange partition, Instant from, List<ChangeStreamContinuationToken> tokens) {
    String last = null;
    int failures = 0;
    while (!stopped) {
      ReadChangeStreamQuery q = ReadChangeStreamQuery.create(table).streamPartition(partition)
          .heartbeatDuration(heartbeat);
      q = last != null ? q.continuationTokens(List.of(ChangeStreamContinuationToken.create(partition, last)))
          : !tokens.isEmpty() ? q.continuationTokens(tokens) : q.startTime(from);
      ServerStream<ChangeStreamRecord> stream = data.readChangeStream(q);
      open.add(stream);
      if (stopped) {
        stream.cancel();
      }
      try {
        for (ChangeStreamRecord r : stream) {
          failures = 0;
          if (r instanceof ChangeStreamMutation m) {
            listener.changed(m);
            last = m.getToken();
          } else if (r instanceof Heartbeat h) {
            heartbeats.incrementAndGet();
            last = h.getChangeStreamContinuationToken().getToken();
          } else if (r instanceof CloseStream c) {
            closeStreams.incrementAndGet();
            for (int i = 0; i < c.getChangeStreamContinuationTokens().size(); i++) {
              offer(c.getNewPartitions().get(i), c.getChangeStreamContinuationTokens().get(i));
            }
            return;
          }
        }
        return; // the stream ended without a CloseStream: only a cancel at close does that
      } catch (RuntimeException e) {
        if (stopped) {
          return;
        }
        firstFailure.compareAndSet(null, e);
        if (++failures >= MAX_FAILURES_IN_A_ROW) {
          givenUp.incrementAndGet();
          return;
        }
        reopened.incrementAndGet();
      } finally {
        open.remove(stream);
      }
    }
  }

  /** A token for a new partition: read the partition once the tokens given for it cover it. */
  private synchronized void offer(ByteStringRange partition, ChangeStreamContinuationToken token) {
    List<ByteString> key = List.of(partition.getStart(), partition.getEnd());
    List<ChangeStreamContinuationToken> tokens = waiting.computeIfAbsent(key, k -> new ArrayList<>());
    tokens.add(token);
    if (covers(partition, tokens)) {
      waiting.remove(key);
      List<ChangeStreamContinuationToken> all = List.copyOf(tokens);
      pool.execute(() -> follow(partition, null, all));
    }
  }

  /** Whether the partitions of {@code tokens}, sorted by start, tile {@code p} with no gap or overlap. */
  private static boolean covers(ByteStringRange p, List<ChangeStreamContinuationToken> tokens) {
    List<ByteStringRange> ranges = tokens.stream().map(ChangeStreamContinuationToken::getPartition)
        .sorted(Comparator.comparing(ByteStringRange::getStart, ByteString.unsignedLexicographicalComparator()))
        .toList();
    ByteString reached = p.getStart();
    boolean toTableEnd = false;
    for (ByteStringRange r : ranges) {
      if (toTableEnd || !r.getStart().equals(reached)) {
        return false;
      }
      reached = r.getEnd();
      toTableEnd = reached.isEmpty(); // an empty end is the end of the table
    }
    return toTableEnd ? p.getEnd().isEmpty() : reached.equals(p.getEnd());
  }

  @Override
  public void close() throws InterruptedException {
    stopped = true;
    open.forEach(ServerStream::cancel);
    pool.shutdownNow();
    pool.awaitTermination(10, TimeUnit.SECONDS);
  }
}
