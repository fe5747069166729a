package io.tabula.multijvm;

import com.google.api.core.ApiFutureCallback;
import com.google.api.core.ApiFutures;
import com.google.cloud.bigtable.data.v2.BigtableDataClient;
import com.google.cloud.bigtable.data.v2.models.RowMutation;
import com.google.cloud.bigtable.data.v2.models.TableId;
import com.google.common.util.concurrent.MoreExecutors;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Writes unique rows of table {@code t} through one node with the official client, keeping a
 * number of writes in flight, each row under the next of its key prefixes (one per tablet
 * range, say). A write may wait 90 s for its answer, so the writes queued on a stopped node's
 * port are answered when it resumes: what such a node acknowledges then is what a fence must
 * catch. Records the acknowledged rows; a write that failed or timed out has an unknown outcome.
 */
final class InFlightWriter {
  private static final TableId T = TableId.of("t");

  private final ConcurrentLinkedQueue<String> acked = new ConcurrentLinkedQueue<>();
  private final AtomicInteger failed = new AtomicInteger();
  private final NodeJvm via;
  private final List<String> prefixes;
  private final int inFlight;
  private final AtomicBoolean stop = new AtomicBoolean();
  private final Semaphore slots;
  private Thread thread;
  private volatile Throwable error;

  InFlightWriter(NodeJvm via, List<String> prefixes, int inFlight) {
    this.via = via;
    this.prefixes = List.copyOf(prefixes);
    this.inFlight = inFlight;
    this.slots = new Semaphore(inFlight);
  }

  /** The rows whose writes were acknowledged so far. */
  ConcurrentLinkedQueue<String> acked() {
    return acked;
  }

  /** How many writes failed or timed out (each may or may not have been applied). */
  int failed() {
    return failed.get();
  }

  void start() {
    thread = new Thread(() -> {
      try (BigtableDataClient c = ClusterFixture.data(via, Duration.ofSeconds(90))) {
        for (int seq = 0; !stop.get(); seq++) {
          if (!slots.tryAcquire(200, TimeUnit.MILLISECONDS)) {
            seq--;
            continue;
          }
          String key = String.format("%s-%s-%07d", prefixes.get(seq % prefixes.size()), via.name, seq);
          ApiFutures.addCallback(c.mutateRowAsync(RowMutation.create(T, key).setCell("f", "q", "v" + seq)),
              new ApiFutureCallback<Void>() {
                @Override
                public void onSuccess(Void v) {
                  acked.add(key);
                  slots.release();
                }

                @Override
                public void onFailure(Throwable t) {
                  failed.incrementAndGet();
                  slots.release();
                }
              }, MoreExecutors.directExecutor());
        }
        // Wait for the answers still due (each at most its deadline).
        slots.tryAcquire(inFlight, 100, TimeUnit.SECONDS);
      } catch (Throwable t) {
        error = t;
      }
    }, "in-flight-writer-" + via.name);
    thread.setDaemon(true);
    thread.start();
  }

  /** Stops writing, waits for the answers still due, and throws what failed in the writer itself. */
  void stop() throws InterruptedException {
    stop.set(true);
    thread.join(120_000);
    if (error != null) {
      throw new AssertionError("the writer through " + via.name + " failed", error);
    }
  }
}
