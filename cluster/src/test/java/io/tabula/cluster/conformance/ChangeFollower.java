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
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

/**
 * A reader of a whole table's change stream through the official Java client, as Beam reads
 * one: every partition on a thread of its own; a {@code CloseStream} followed to its new
 * partitions, a merged one opened once the tokens of all its parents cover it. Each change
 * goes to a {@link Listener} on its partition's thread as the client hands it over.
 *
 * <p>Two ways to read, for tests and for the change-stream benchmark: a stream read for a
 * slice of time, then cancelled and resumed from the last token it saw (a change's or a
 * heartbeat's), as Beam's checkpoints do; or one stream held open for as long as it lasts
 * (no slice). A stream that fails is opened again from its last token up to a number of times
 * in a row ({@link #reopened}), after which its partition is given up ({@link #givenUp}); the
 * first failure is kept ({@link #failure}).
 *
 * <p>Thread-safe; {@link #close} cancels the open streams (a client's channel closes only once
 * its calls have ended) and stops the threads.
 */
public final class ChangeFollower implements AutoCloseable {
  /** One cell of qualifier {@code q} written, as a change carried it. */
  public record Seen(String row, String value, Instant commit) {}

  /** Told of each change as it arrives. */
  public interface Listener {
    void changed(ChangeStreamMutation change);
  }

  private final BigtableDataClient data;
  private final String table;
  private final Duration heartbeat;
  /** How long a stream is read before it is resumed from its last token; null: as long as it lasts. */
  private final Duration slice;
  private final int failuresInARow;
  private final Listener listener;
  private final ExecutorService pool = Executors.newCachedThreadPool(r -> {
    Thread t = new Thread(r, "change-follower");
    t.setDaemon(true);
    return t;
  });
  private final List<Seen> seen = new ArrayList<>();
  /** Tokens offered for a partition not yet covered, by the partition's start and end. */
  private final Map<List<ByteString>, List<ChangeStreamContinuationToken>> waiting = new HashMap<>();
  private final AtomicReference<RuntimeException> failure = new AtomicReference<>();
  private final Set<ServerStream<ChangeStreamRecord>> open = ConcurrentHashMap.newKeySet();
  private volatile boolean stopped;

  public final AtomicInteger closes = new AtomicInteger();
  public final AtomicInteger merges = new AtomicInteger();
  public final AtomicInteger resumes = new AtomicInteger();
  public final AtomicInteger heartbeats = new AtomicInteger();
  public final AtomicInteger reopened = new AtomicInteger();
  public final AtomicInteger givenUp = new AtomicInteger();

  /**
   * A follower for tests: heartbeats every 300 ms, a resume every {@code slice}, a failure not
   * retried, and the cells of qualifier {@code q} kept in arrival order ({@link #seen}).
   */
  public ChangeFollower(BigtableDataClient data, String table, Duration slice) {
    this(data, table, Duration.ofMillis(300), slice, 1, null);
  }

  /**
   * A follower with heartbeats every {@code heartbeat}, resumes every {@code slice} (null: none),
   * a failing stream opened again until it fails {@code failuresInARow} times in a row, and each
   * change told to {@code listener} (null: the cells of qualifier {@code q} are kept instead).
   */
  public ChangeFollower(BigtableDataClient data, String table, Duration heartbeat, Duration slice,
      int failuresInARow, Listener listener) {
    this.data = data;
    this.table = table;
    this.heartbeat = heartbeat;
    this.slice = slice;
    this.failuresInARow = failuresInARow;
    this.listener = listener != null ? listener : this::keep;
  }

  /** Starts reading every partition the table has now from {@code from}. */
  public void start(Instant from) {
    for (ByteStringRange p : data.generateInitialChangeStreamPartitions(table)) {
      pool.execute(() -> follow(p, from, List.of()));
    }
  }

  public synchronized List<Seen> seen() {
    return new ArrayList<>(seen);
  }

  /** The first failure of any stream, if there was one. */
  public RuntimeException failure() {
    return failure.get();
  }

  private synchronized void keep(ChangeStreamMutation m) {
    m.getEntries().forEach(e -> {
      if (e instanceof SetCell s && s.getQualifier().toStringUtf8().equals("q")) {
        seen.add(new Seen(m.getRowKey().toStringUtf8(), s.getValue().toStringUtf8(), m.getCommitTime()));
      }
    });
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
      long until = slice == null ? Long.MAX_VALUE : System.nanoTime() + slice.toNanos();
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
      } catch (RuntimeException e) {
        if (stopped) {
          return;
        }
        failure.compareAndSet(null, e);
        if (++failures >= failuresInARow) {
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
