package io.tabula.cluster.routing;

import io.tabula.actors.Stages;
import io.tabula.actors.master.Directory;
import io.tabula.actors.master.DirectoryCache;
import io.tabula.actors.master.Master;
import io.tabula.actors.master.TableInfo;
import io.tabula.actors.master.TabletInfo;
import io.tabula.actors.tablet.LocalTablets;
import io.tabula.actors.tablet.NodeRequests;
import io.tabula.actors.tablet.TabletActor;
import io.tabula.actors.tablet.TabletReads;
import io.tabula.cluster.sharding.TabletShards;
import io.tabula.protocol.errors.ErrorCode;
import io.tabula.protocol.errors.Refusal;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.function.BiFunction;
import java.util.function.Function;
import java.util.function.Supplier;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.DispatcherSelector;
import org.apache.pekko.actor.typed.javadsl.AskPattern;
import org.apache.pekko.pattern.StatusReply;

/**
 * Sends a request to the tablet that holds a row: finds the tablet in the node's cache of
 * tablet locations ({@link TabletLocations}, looked up from the master on a miss), asks the
 * tablet (its actor here, else its sharded entity), and when the tablet answers that the row
 * has moved (a split or a merge), forgets it and tries again, with a short growing pause, for
 * up to {@code retryFor}. Failures are Tabula's typed refusals (the gRPC layer turns them into
 * statuses). Thread-safe.
 */
public final class Router {
  /** A reply and the tablet that gave it. */
  public record Answer<T>(TabletInfo tablet, T value) {}

  private final ActorSystem<?> system;
  private final TabletShards tablets;
  private final DirectoryCache directory;
  private final ActorRef<Master.Command> master;
  private final LocalTablets local;
  private final NodePeers peers;
  private final Executor blockingIo;
  private final Duration askTimeout;
  private final long retryForNanos;
  private final UnopenedTablets unopened;
  private final TabletLocations locations;

  /** @param locationCache the most tablet locations the node caches ({@link TabletLocations}) */
  public Router(ActorSystem<?> system, DirectoryCache directory, ActorRef<Master.Command> master, LocalTablets local,
      NodePeers peers, Duration askTimeout, Duration retryFor, UnopenedTablets unopened, int locationCache) {
    this.system = system;
    this.locations = new TabletLocations(master, system, askTimeout, locationCache, at -> at.before()
        ? directory.get().locateBefore(at.table(), at.row()) : directory.get().locate(at.table(), at.row()));
    directory.addListener(locations::keepTablesOf);
    directory.addTabletListener(locations::changed);
    this.unopened = unopened;
    this.tablets = TabletShards.of(system);
    this.directory = directory;
    this.master = master;
    this.local = local;
    this.peers = peers;
    this.blockingIo = system.dispatchers().lookup(DispatcherSelector.blocking());
    this.askTimeout = askTimeout;
    this.retryForNanos = retryFor.toNanos();
  }

  public ActorSystem<?> system() {
    return system;
  }

  /**
   * {@code read} over the reads of tablet {@code tabletId}, when this node serves it, run on
   * the blocking-I/O dispatcher (a read may wait for the device, and the calling thread
   * serves a whole HTTP/2 connection); null when the tablet is not served here (ask it
   * instead). A failed read completes the stage as the tablet's actor would have refused
   * it (moved, invalid, ...).
   */
  <T> CompletionStage<T> readLocal(String tabletId, Function<TabletReads, T> read) {
    TabletReads reads = local.reads(tabletId);
    if (reads == null) {
      return null;
    }
    CompletableFuture<T> result = new CompletableFuture<>();
    blockingIo.execute(() -> {
      try {
        result.complete(read.apply(reads));
      } catch (RuntimeException e) {
        result.completeExceptionally(TabletReads.failure(e).exception());
      }
    });
    return result;
  }

  /** Checks a serialized filter (see {@link LocalTablets#checkFilter}). */
  public void checkFilter(byte[] filter) {
    local.checkFilter(filter);
  }

  /** Which tablets were never opened, so hold no row. */
  UnopenedTablets unopened() {
    return unopened;
  }

  /** The reads of tablet {@code tabletId} when this node serves it, else null. */
  TabletReads localReads(String tabletId) {
    return local.reads(tabletId);
  }

  public Directory directory() {
    return directory.get();
  }

  /** Where this node finds the tablet of a row. */
  public TabletLocations locations() {
    return locations;
  }

  /**
   * The {@link NodeRequests} of the node that owns tablet {@code t} by its cached location, when
   * that is another Up node whose instance is known; else null (the tablet is then served here,
   * or reached through its sharded actor).
   */
  ActorRef<NodeRequests.Command> peerOf(TabletInfo t) {
    String owner = locations.ownerOf(t);
    return owner == null ? null : peers.of(owner);
  }

  /** Asks another node to read {@code parts}; fails only when the node does not answer in time. */
  CompletionStage<NodeRequests.ReadAnswer> readOnNode(ActorRef<NodeRequests.Command> peer,
      List<NodeRequests.Part> parts, byte[] filter) {
    return Stages.direct(AskPattern.ask(peer, replyTo -> new NodeRequests.Read(parts, filter, replyTo), askTimeout,
        system.scheduler()));
  }

  /**
   * Asks another node to apply {@code batches}; fails only when the node does not answer in time.
   * That node asks their tablets {@link NodeRequests#TABLETS_AT_ONCE} at a time, each within the
   * ask timeout, so the answer may take that timeout once per round of them.
   */
  CompletionStage<NodeRequests.WriteAnswer> writeOnNode(ActorRef<NodeRequests.Command> peer,
      List<NodeRequests.Batch> batches) {
    int rounds = Math.max(1, (batches.size() + NodeRequests.TABLETS_AT_ONCE - 1) / NodeRequests.TABLETS_AT_ONCE);
    return Stages.direct(AskPattern.ask(peer, replyTo -> new NodeRequests.Write(batches, replyTo),
        askTimeout.multipliedBy(rounds), system.scheduler()));
  }

  /** The directory after asking the master for its newest copy. */
  public CompletionStage<Directory> refreshedDirectory() {
    return directory.refresh(master, system, askTimeout);
  }

  /** The table's info; NOT_FOUND (after one refresh from the master) if it does not exist. */
  public CompletionStage<TableInfo> table(String table) {
    TableInfo t = directory.get().table(table);
    if (t != null) {
      return CompletableFuture.completedFuture(t);
    }
    return directory.refresh(master, system, askTimeout).thenApply(d -> {
      TableInfo again = d.table(table);
      if (again == null) {
        throw Refusal.of(ErrorCode.NOT_FOUND, "table " + table + " not found").exception();
      }
      return again;
    });
  }

  /** Asks the tablet of {@code table} holding {@code row}. */
  public <T> CompletionStage<Answer<T>> ask(String table, byte[] row,
      BiFunction<TabletInfo, ActorRef<StatusReply<T>>, TabletActor.Command> message) {
    return attempt(TabletPosition.of(table, row), message, System.nanoTime(), 0);
  }

  /** Asks the tablet at {@code at}. */
  public <T> CompletionStage<Answer<T>> ask(TabletPosition at,
      BiFunction<TabletInfo, ActorRef<StatusReply<T>>, TabletActor.Command> message) {
    return attempt(at, message, System.nanoTime(), 0);
  }

  /** Asks one tablet by id, without rerouting (for per-tablet operations over a whole table). */
  public <T> CompletionStage<T> askTablet(String tabletId,
      Function<ActorRef<StatusReply<T>>, TabletActor.Command> message) {
    // A tablet served here is asked in its own mailbox: the shard region and the shard would
    // cost two more hand-overs between threads. If its actor stops while the request waits in
    // its mailbox, the request becomes a dead letter that LostRequests answers as moved, and
    // the caller tries again. If it had stopped before the ask, the ask fails at once without
    // sending anything, and by then the actor has taken itself out of LocalTablets (it does so
    // in PostStop, before its mailbox closes): that failure goes through sharding instead. A
    // timeout while the actor is still listed is a real one, and is not sent twice.
    ActorRef<TabletActor.Command> here = local.actor(tabletId);
    if (here == null) {
      return viaSharding(tabletId, message);
    }
    return Stages.direct(AskPattern.<TabletActor.Command, T>askWithStatus(here, message::apply, askTimeout,
        system.scheduler())).handle((v, err) -> {
          if (err == null) {
            return CompletableFuture.completedFuture(v);
          }
          Throwable cause = Refusal.unwrap(err);
          if (cause instanceof java.util.concurrent.TimeoutException && local.actor(tabletId) != here) {
            return viaSharding(tabletId, message);
          }
          return CompletableFuture.<T>failedFuture(cause);
        }).thenCompose(x -> x);
  }

  private <T> CompletionStage<T> viaSharding(String tabletId,
      Function<ActorRef<StatusReply<T>>, TabletActor.Command> message) {
    return Stages.direct(tablets.tablet(tabletId).<T>askWithStatus(message::apply, askTimeout));
  }

  /**
   * Asks every tablet of {@code table}, as the master lists them now, and completes with
   * their answers in row order; NOT_FOUND for an unknown table. When a tablet answers that
   * it has split, every tablet is listed and asked again, for up to
   * {@code retryFor}: {@code message} must be safe to repeat. A tablet never opened
   * ({@link UnopenedTablets}) is not asked: its answer is {@code ifNeverOpened}, what it would
   * answer empty.
   */
  public <T> CompletionStage<List<Answer<T>>> askEveryTablet(String table,
      Function<ActorRef<StatusReply<T>>, TabletActor.Command> message, T ifNeverOpened) {
    return askEveryTablet(table, message, ifNeverOpened, System.nanoTime(), 0);
  }

  private <T> CompletionStage<List<Answer<T>>> askEveryTablet(String table,
      Function<ActorRef<StatusReply<T>>, TabletActor.Command> message, T ifNeverOpened, long startNanos, int n) {
    return locations.every(table).<CompletionStage<List<Answer<T>>>>handle((tablets, err) -> err == null
        ? askEach(table, tablets, message, ifNeverOpened, startNanos, n)
        : retryMoved(err, startNanos, n, () -> askEveryTablet(table, message, ifNeverOpened, startNanos, n + 1)))
        .thenCompose(x -> x);
  }

  private <T> CompletionStage<List<Answer<T>>> askEach(String table, List<TabletInfo> tablets,
      Function<ActorRef<StatusReply<T>>, TabletActor.Command> message, T ifNeverOpened, long startNanos, int n) {
    return unopened.holdingNothing(tablets)
        .thenCompose(none -> {
          // A table of thousands of tablets is asked NodeRequests.TABLETS_AT_ONCE at a time.
          List<Supplier<CompletionStage<Answer<T>>>> tasks = new ArrayList<>(tablets.size());
          for (TabletInfo ti : tablets) {
            tasks.add(() -> (none.contains(ti.id()) ? CompletableFuture.completedFuture(ifNeverOpened)
                : askTablet(ti.id(), message)).thenApply(v -> new Answer<>(ti, v)));
          }
          List<CompletableFuture<Answer<T>>> asks = Stages.atMost(NodeRequests.TABLETS_AT_ONCE, tasks, system);
          return everyAnswer(table, message, ifNeverOpened, startNanos, n, asks);
        });
  }

  /** The answers of {@code asks}, or all tablets asked again when one answered that it moved. */
  private <T> CompletionStage<List<Answer<T>>> everyAnswer(String table,
      Function<ActorRef<StatusReply<T>>, TabletActor.Command> message, T ifNeverOpened, long startNanos, int n,
      List<CompletableFuture<Answer<T>>> asks) {
    return CompletableFuture.allOf(asks.toArray(CompletableFuture[]::new))
        .<CompletionStage<List<Answer<T>>>>handle((x, err) -> {
          if (err == null) {
            return CompletableFuture.completedFuture(asks.stream().map(CompletableFuture::join).toList());
          }
          return retryMoved(err, startNanos, n, () -> askEveryTablet(table, message, ifNeverOpened, startNanos, n + 1));
        }).thenCompose(x -> x);
  }

  /**
   * After a failed attempt: {@code again} after a short growing pause when the failure was a
   * moved answer and time is left, else the failure as a failure itself.
   */
  private <R> CompletionStage<R> retryMoved(Throwable err, long startNanos, int n,
      Supplier<CompletionStage<R>> again) {
    if (!Refusal.is(err, ErrorCode.MOVED) || !mayRetryMoved(startNanos)) {
      return CompletableFuture.failedFuture(err);
    }
    return pause(n).thenCompose(d -> again.get());
  }

  /** Whether a request that started at {@code startNanos} may still be retried after a moved answer. */
  boolean mayRetryMoved(long startNanos) {
    return System.nanoTime() - startNanos <= retryForNanos;
  }

  /** Completes after the pause that follows moved answer {@code n} (from 0). */
  static CompletionStage<Void> pause(int n) {
    long pauseMs = Math.min(200, 5L << Math.min(n, 6));
    CompletableFuture<Void> pause = new CompletableFuture<>();
    CompletableFuture.delayedExecutor(pauseMs, TimeUnit.MILLISECONDS).execute(() -> pause.complete(null));
    return pause;
  }

  /**
   * Asks the tablet at {@code at}, found in the cache or looked up; one that answers moved is
   * forgotten, and the request tries again while it may.
   */
  private <T> CompletionStage<Answer<T>> attempt(TabletPosition at,
      BiFunction<TabletInfo, ActorRef<StatusReply<T>>, TabletActor.Command> message, long startNanos, int n) {
    return locations.locate(at).thenCompose(t -> this.<T>askTablet(t.id(), replyTo -> message.apply(t, replyTo))
        .whenComplete((v, err) -> {
          if (err != null && Refusal.is(err, ErrorCode.MOVED)) {
            locations.forget(t);
          }
        }).thenApply(v -> new Answer<>(t, v))).<CompletionStage<Answer<T>>>handle((a, err) -> err == null
            ? CompletableFuture.completedFuture(a)
            : retryMoved(err, startNanos, n, () -> attempt(at, message, startNanos, n + 1))).thenCompose(x -> x);
  }
}
