package io.tabula.cluster.conformance;

import com.google.api.gax.rpc.ServerStream;
import com.google.cloud.bigtable.data.v2.BigtableDataClient;
import com.google.cloud.bigtable.data.v2.models.ChangeStreamContinuationToken;
import com.google.cloud.bigtable.data.v2.models.ChangeStreamMutation;
import com.google.cloud.bigtable.data.v2.models.ChangeStreamRecord;
import com.google.cloud.bigtable.data.v2.models.CloseStream;
import com.google.cloud.bigtable.data.v2.models.Heartbeat;
import com.google.cloud.bigtable.data.v2.models.Range.ByteStringRange;
import com.google.cloud.bigtable.data.v2.models.ReadChangeStreamQuery;
import com.google.cloud.bigtable.data.v2.models.SetCell;
import com.google.protobuf.ByteString;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

/**
 * A reader of a whole table's change stream through the official Java client, as Beam reads
 * one: every partition on a thread of its own; a stream read for a slice of time, then
 * cancelled and resumed from the last token it saw (a change's or a heartbeat's); a
 * {@code CloseStream} followed to its new partitions, a merged one opened once the tokens of
 * all its parents cover it. What it sees is kept in arrival order. Thread-safe.
 */
public final class ChangeFollower implements AutoCloseable {
  /** One cell written, as a change carried it. */
  public record Seen(String row, String value, Instant commit) {}

  private final BigtableDataClient data;
  private final String table;
  private final Duration slice;
  private final ExecutorService pool = Executors.newCachedThreadPool(r -> {
    Thread t = new Thread(r, "change-follower");
    t.setDaemon(true);
    return t;
  });
  private final List<Seen> seen = new ArrayList<>();
  private final Map<String, List<ChangeStreamContinuationToken>> waiting = new HashMap<>();
  private final AtomicReference<Throwable> failure = new AtomicReference<>();
  public final AtomicInteger closes = new AtomicInteger();
  public final AtomicInteger resumes = new AtomicInteger();
  public final AtomicInteger heartbeats = new AtomicInteger();
  private volatile boolean stopped;
  /** The streams open now, cancelled at {@link #close} (a client's channel closes only once its calls have ended). */
  private final java.util.Set<ServerStream<ChangeStreamRecord>> open = java.util.concurrent.ConcurrentHashMap.newKeySet();
  public final AtomicInteger merges = new AtomicInteger();

  public ChangeFollower(BigtableDataClient data, String table, Duration slice) {
    this.data = data;
    this.table = table;
    this.slice = slice;
  }

  /** Starts reading every partition from {@code from}. */
  public void start(Instant from) {
    for (ByteStringRange p : data.generateInitialChangeStreamPartitions(table)) {
      pool.execute(() -> read(p, from, null));
    }
  }

  public synchronized List<Seen> seen() {
    return new ArrayList<>(seen);
  }

  public Throwable failure() {
    return failure.get();
  }

  private void read(ByteStringRange partition, Instant from, List<ChangeStreamContinuationToken> tokens) {
    try {
      String last = null;
      while (!stopped) {
        ReadChangeStreamQuery q = ReadChangeStreamQuery.create(table).streamPartition(partition)
            .heartbeatDuration(Duration.ofMillis(300));
        q = last != null ? q.continuationTokens(List.of(ChangeStreamContinuationToken.create(partition, last)))
            : tokens != null ? q.continuationTokens(tokens) : q.startTime(from);
        ServerStream<ChangeStreamRecord> stream = data.readChangeStream(q);
        open.add(stream);
        if (stopped) {
          stream.cancel();
        }
        long until = System.nanoTime() + slice.toNanos();
        try {
          for (ChangeStreamRecord r : stream) {
            if (r instanceof ChangeStreamMutation m) {
              synchronized (this) {
                m.getEntries().forEach(e -> {
                  if (e instanceof SetCell s && s.getQualifier().toStringUtf8().equals("q")) {
                    seen.add(new Seen(m.getRowKey().toStringUtf8(), s.getValue().toStringUtf8(), m.getCommitTime()));
                  }
                });
              }
              last = m.getToken();
            } else if (r instanceof Heartbeat h) {
              heartbeats.incrementAndGet();
              last = h.getChangeStreamContinuationToken().getToken();
            } else if (r instanceof CloseStream c) {
              closes.incrementAndGet();
              if (c.getNewPartitions().size() == 1) {
                merges.incrementAndGet();
              }
              for (int i = 0; i < c.getChangeStreamContinuationTokens().size(); i++) {
                offer(c.getNewPartitions().get(i), c.getChangeStreamContinuationTokens().get(i));
              }
              return;
            }
            if (System.nanoTime() > until && last != null) {
              stream.cancel();
              resumes.incrementAndGet();
              break;
            }
          }
        } finally {
          open.remove(stream);
        }
      }
    } catch (RuntimeException e) {
      if (!stopped) {
        failure.compareAndSet(null, e);
      }
    }
  }

  /** A token for a new partition: read it once the tokens given for it cover it. */
  private synchronized void offer(ByteStringRange partition, ChangeStreamContinuationToken token) {
    String key = partition.getStart().toStringUtf8() + "|" + partition.getEnd().toStringUtf8();
    List<ChangeStreamContinuationToken> tokens = waiting.computeIfAbsent(key, k -> new ArrayList<>());
    tokens.add(token);
    if (covers(partition, tokens)) {
      waiting.remove(key);
      List<ChangeStreamContinuationToken> all = List.copyOf(tokens);
      pool.execute(() -> read(partition, null, all));
    }
  }

  private static boolean covers(ByteStringRange p, List<ChangeStreamContinuationToken> tokens) {
    List<ByteStringRange> parts = new ArrayList<>(tokens.stream().map(ChangeStreamContinuationToken::getPartition)
        .toList());
    parts.sort(Comparator.comparing(ByteStringRange::getStart, ByteString.unsignedLexicographicalComparator()));
    ByteString at = p.getStart();
    for (ByteStringRange r : parts) {
      if (!r.getStart().equals(at)) {
        return false;
      }
      at = r.getEnd();
      if (at.isEmpty()) {
        return p.getEnd().isEmpty();
      }
    }
    return at.equals(p.getEnd());
  }

  @Override
  public void close() throws InterruptedException {
    stopped = true;
    open.forEach(ServerStream::cancel);
    pool.shutdownNow();
    pool.awaitTermination(10, TimeUnit.SECONDS);
  }
}
