package io.tabula.cluster;

import com.google.bigtable.admin.v2.BigtableTableAdminClient;
import com.google.bigtable.admin.v2.ColumnFamily;
import com.google.bigtable.admin.v2.CreateTableRequest;
import com.google.bigtable.admin.v2.DeleteTableRequest;
import com.google.bigtable.admin.v2.GcRule;
import com.google.bigtable.admin.v2.Table;
import com.google.bigtable.v2.BigtableClient;
import com.google.bigtable.v2.MutateRowRequest;
import com.google.bigtable.v2.MutateRowsRequest;
import com.google.bigtable.v2.Mutation;
import com.google.bigtable.v2.ReadRowsRequest;
import com.google.bigtable.v2.ReadRowsResponse;
import com.google.bigtable.v2.RowSet;
import com.google.protobuf.ByteString;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.tabula.actors.master.TabletLookup;
import io.tabula.cluster.routing.TabletLocations;
import java.lang.management.CompilationMXBean;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Semaphore;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.UnaryOperator;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.IntFunction;
import java.util.function.Predicate;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.grpc.GrpcClientSettings;
import org.apache.pekko.stream.javadsl.Sink;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A fresh node's first minute, spent before it reports itself serving rather than on its
 * first users' requests: the node calls its own Cloud Bigtable endpoint over loopback (so the
 * HTTP/2 and gRPC layers, the routing, the tablet's actor, the commit log, the memtable and
 * the read paths all run) on a scratch table of its own, {@code _tabula_warm_up_<node>},
 * dropped at the end (and at the next start, if a start was stopped midway). It makes rounds of single-row writes, batched writes, point reads and a
 * scan, until the JIT compilers used under {@value #QUIET_SHARE} of the round's time or
 * {@code tabula.node.warm-up} has passed (0 turns it off).
 *
 * <p>The scratch table's tablet must be placed on this node: in a cluster the master may
 * place it elsewhere, and a starting node must not load another node with its warm-up. The
 * node waits up to {@value #PLACED_WITHIN_SECONDS} s for the master to place it here (it
 * opens at the first write); if it is not, it drops the table and serves without warming up.
 *
 * <p>A failure of the warm-up (say the master is slow to answer) is logged and the node
 * serves anyway: warm-up is never a reason not to start. Runs on the starting thread, which
 * may block.
 */
final class NodeWarmUp {
  private static final Logger LOG = LoggerFactory.getLogger(NodeWarmUp.class);
  private static final String INSTANCE = "projects/tabula/instances/tabula";
  private static final String FAMILY = "f";
  private static final ByteString QUALIFIER = ByteString.copyFromUtf8("v");
  /** The compilers' share of a round below which the node counts as warm. */
  static final double QUIET_SHARE = 0.10;
  private static final int ROWS = 2_000;
  private static final int IN_FLIGHT = 32;
  private static final int BATCH = 100;
  private static final int VALUE_BYTES = 1_000;
  /** The longest any one call may take; every wait is also held to the budget left, plus {@link #GRACE}. */
  private static final Duration CALL_WAIT = Duration.ofSeconds(30);
  /** What calls in flight when the budget runs out, and the clean-up after it, may still take. */
  private static final long GRACE_NANOS = TimeUnit.SECONDS.toNanos(5);
  static final int PLACED_WITHIN_SECONDS = 5;
  private static final String TABLE_PREFIX = "_tabula_warm_up_";
  /** The longest node name a scratch table is named after (table ids have at most 50 characters). */
  private static final int NAME_IN_TABLE = 50 - TABLE_PREFIX.length();

  /** How a warm-up went, for the log and for tests; {@code rounds} 0 when the table was not placed here. */
  record Outcome(int rounds, long calls, Duration took, boolean quiet) {}

  private final ActorSystem<?> system;
  private final String table;
  private final BigtableClient data;
  private final BigtableTableAdminClient admin;
  private final byte[] value = new byte[VALUE_BYTES];

  private NodeWarmUp(ActorSystem<?> system, String node, String host, int port,
      UnaryOperator<GrpcClientSettings> access) {
    this.system = system;
    this.table = table(node);
    GrpcClientSettings settings = access.apply(GrpcClientSettings.connectToServiceAt(host, port, system)
        .withDeadline(CALL_WAIT));
    this.data = BigtableClient.create(settings, system);
    this.admin = BigtableTableAdminClient.create(settings, system);
    ThreadLocalRandom.current().nextBytes(value);
  }

  /**
   * Warms the node serving on {@code host:port} for at most {@code budget}, its client made by
   * {@code access} (TLS and the node's own token on a secured node: NodeSecurity.ownClient);
   * returns how it went, or null when {@code budget} is zero or the warm-up failed (logged).
   */
  static Outcome run(ActorSystem<?> system, String node, String host, int port, Duration budget,
      Predicate<String> placedHere, UnaryOperator<GrpcClientSettings> access) {
    if (budget.isZero() || budget.isNegative()) {
      return null;
    }
    NodeWarmUp w = new NodeWarmUp(system, node, host, port, access);
    try {
      Outcome o = w.warm(budget, placedHere);
      if (o.rounds() == 0) {
        LOG.info("no warm-up: the scratch table's tablet was not placed on this node within {} s",
            PLACED_WITHIN_SECONDS);
      } else {
        LOG.info("warmed up in {} ms: {} rounds, {} calls, the JIT compilers {}", o.took().toMillis(), o.rounds(),
            o.calls(), o.quiet() ? "nearly idle at the end" : "still busy when the time was up");
      }
      return o;
    } catch (ExecutionException | TimeoutException | RuntimeException e) {
      LOG.warn("the warm-up failed; serving without it", e);
      return null;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return null;
    } finally {
      w.close();
    }
  }

  /**
   * Whether every tablet of a table is placed on node {@code node}, as the master answers now
   * (the warm-up's calls then stay on this node; its tablets open at its first write).
   */
  static Predicate<String> placedOn(String node, TabletLocations locations) {
    return table -> {
      try {
        TabletLookup.Located a = locations.fresh(table, io.tabula.persistence.encoding.ByteArrays.EMPTY, TabletLookup.MOST_TABLETS).toCompletableFuture()
            .get(2, TimeUnit.SECONDS);
        return !a.tablets().isEmpty() && a.tablets().get(a.tablets().size() - 1).endRow().length == 0
            && a.owners().stream().allMatch(node::equals);
      } catch (ExecutionException | TimeoutException e) {
        return false; // not made yet, or the master is busy: asked again
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return false;
      }
    };
  }

  /**
   * The scratch table of node {@code node}: named after it, so that a start stopped midway
   * (a kill, a SIGTERM) leaves a table the node's next start finds and drops.
   */
  static String table(String node) {
    return TABLE_PREFIX + (node.length() <= NAME_IN_TABLE ? node
        : HexFormat.of().toHexDigits(node.hashCode()) + node.substring(node.length() - NAME_IN_TABLE + 8));
  }

  private Outcome warm(Duration budget, Predicate<String> placedHere)
      throws ExecutionException, TimeoutException, InterruptedException {
    long start = System.nanoTime();
    long deadline = start + budget.toNanos();
    CompilationMXBean jit = ManagementFactory.getCompilationMXBean();
    boolean timed = jit != null && jit.isCompilationTimeMonitoringSupported();
    String name = INSTANCE + "/tables/" + table;
    dropIfThere(name);
    int rounds = 0;
    long calls = 0;
    boolean quiet = false;
    try {
      await(admin.createTable(CreateTableRequest.newBuilder().setParent(INSTANCE).setTableId(table)
          .setTable(Table.newBuilder().putColumnFamilies(FAMILY, ColumnFamily.newBuilder()
              .setGcRule(GcRule.newBuilder().setMaxNumVersions(1)).build())).build()), deadline);
      long placedBy = Math.min(deadline, System.nanoTime() + TimeUnit.SECONDS.toNanos(PLACED_WITHIN_SECONDS));
      while (!placedHere.test(table)) {
        if (System.nanoTime() > placedBy) {
          return new Outcome(0, 0, Duration.ofNanos(System.nanoTime() - start), false);
        }
        Thread.sleep(50);
      }
      while (!quiet && System.nanoTime() < deadline) {
        long roundStart = System.nanoTime();
        long compiledBefore = timed ? jit.getTotalCompilationTime() : 0;
        calls += round(name, rounds, deadline);
        rounds++;
        long roundMillis = Math.max(1, (System.nanoTime() - roundStart) / 1_000_000);
        quiet = timed && (jit.getTotalCompilationTime() - compiledBefore) < QUIET_SHARE * roundMillis;
      }
    } finally {
      dropIfThere(name);
    }
    return new Outcome(rounds, calls, Duration.ofNanos(System.nanoTime() - start), quiet);
  }

  /**
   * One round: single-row writes, batched writes, point reads, one scan; answers the calls made.
   * Neither kind of write may take more than a third of the time left, so that a short budget
   * on a slow machine still reaches every kind of call.
   */
  private long round(String name, int round, long deadline)
      throws ExecutionException, TimeoutException, InterruptedException {
    int base = (round % 8) * ROWS;
    long third = Math.max(0, deadline - System.nanoTime()) / 3;
    long calls = inFlight(ROWS, System.nanoTime() + third, i -> data.mutateRow(MutateRowRequest.newBuilder()
        .setTableName(name).setRowKey(key(base + i)).addMutations(cell()).build()));
    calls += inFlight(ROWS / BATCH, Math.min(deadline, System.nanoTime() + third), b -> {
      MutateRowsRequest.Builder req = MutateRowsRequest.newBuilder().setTableName(name);
      for (int i = 0; i < BATCH; i++) {
        req.addEntries(MutateRowsRequest.Entry.newBuilder().setRowKey(key(base + b * BATCH + i)).addMutations(cell()));
      }
      return data.mutateRows(req.build()).runWith(Sink.ignore(), system);
    });
    calls += inFlight(ROWS, deadline, i -> readRow(name, key(base + ThreadLocalRandom.current().nextInt(ROWS))));
    await(data.readRows(ReadRowsRequest.newBuilder().setTableName(name).build()).runWith(Sink.ignore(), system),
        deadline);
    return calls + 1;
  }

  private CompletionStage<List<ReadRowsResponse>> readRow(String name, ByteString key) {
    return data.readRows(ReadRowsRequest.newBuilder().setTableName(name)
        .setRows(RowSet.newBuilder().addRowKeys(key)).setRowsLimit(1).build()).runWith(Sink.seq(), system);
  }

  /** Calls {@code call(0..n-1)} with up to {@value #IN_FLIGHT} in flight, stopping early at the deadline. */
  private long inFlight(int n, long deadline, IntFunction<CompletionStage<?>> call)
      throws ExecutionException, TimeoutException, InterruptedException {
    Semaphore slots = new Semaphore(IN_FLIGHT);
    AtomicReference<Throwable> failure = new AtomicReference<>();
    int made = 0;
    for (; made < n && failure.get() == null && System.nanoTime() < deadline; made++) {
      if (!slots.tryAcquire(waitNanos(deadline), TimeUnit.NANOSECONDS)) {
        throw new TimeoutException("no warm-up call was answered in time");
      }
      call.apply(made).whenComplete((ok, err) -> {
        if (err != null) {
          failure.compareAndSet(null, err);
        }
        slots.release();
      });
    }
    if (!slots.tryAcquire(IN_FLIGHT, waitNanos(deadline), TimeUnit.NANOSECONDS)) {
      throw new TimeoutException("the last warm-up calls were not answered in time");
    }
    if (failure.get() != null) {
      throw new ExecutionException("a warm-up call failed", failure.get());
    }
    return made;
  }

  /** Drops the scratch table if it exists (a leftover of a start stopped midway, or this one's). */
  private void dropIfThere(String name) throws ExecutionException, TimeoutException, InterruptedException {
    try {
      await(admin.deleteTable(DeleteTableRequest.newBuilder().setName(name).build()), System.nanoTime());
    } catch (ExecutionException e) {
      if (!(e.getCause() instanceof StatusRuntimeException s && s.getStatus().getCode() == Status.Code.NOT_FOUND)) {
        throw e;
      }
    }
  }

  /** How long a wait may last: the budget left until {@code deadline}, plus the grace, at most {@link #CALL_WAIT}. */
  private static long waitNanos(long deadline) {
    return Math.min(CALL_WAIT.toNanos(), Math.max(0, deadline - System.nanoTime()) + GRACE_NANOS);
  }

  private static <T> T await(CompletionStage<T> s, long deadline)
      throws ExecutionException, TimeoutException, InterruptedException {
    return s.toCompletableFuture().get(waitNanos(deadline), TimeUnit.NANOSECONDS);
  }

  private static ByteString key(int i) {
    return ByteString.copyFromUtf8(String.format(Locale.ROOT, "row%010d", i));
  }

  private Mutation cell() {
    return Mutation.newBuilder().setSetCell(Mutation.SetCell.newBuilder().setFamilyName(FAMILY)
        .setColumnQualifier(QUALIFIER).setTimestampMicros(1_000).setValue(ByteString.copyFrom(value))).build();
  }

  private void close() {
    try {
      await(data.close(), System.nanoTime());
      await(admin.close(), System.nanoTime());
    } catch (ExecutionException | TimeoutException e) {
      LOG.debug("closing the warm-up's clients", e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
