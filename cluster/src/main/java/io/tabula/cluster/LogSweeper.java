package io.tabula.cluster;

import io.tabula.actors.master.Master;
import io.tabula.persistence.storage.RootIdentity;
import io.tabula.persistence.storage.RootMismatchException;
import io.tabula.persistence.storage.Storage;
import io.tabula.persistence.wal.LogFolderMissingException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import java.util.function.Function;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.AskPattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Fences and empties the commit-log folders of this node's earlier lives ({@code
 * logs/<node>.<incarnation>} other than the one it writes now). One life per log folder: a
 * later life never lets an earlier one write unfenced, and never removes its fence.
 * <ul>
 *   <li>At start, before the node serves, every earlier life's folder is fenced ({@link
 *       #fenceEarlierLives}). The name is free only once the cluster took the earlier life for
 *       dead, but that life may still run (frozen, or cut off), and a process of it that resumes
 *       should acknowledge nothing more. A fence that fails or takes too long (on HDFS, a lease
 *       recovery stuck on a block whose datanodes are down) does not stop the start: it is
 *       tried again in the background until it is made. That is safe because this fence is not
 *       what keeps an earlier life's acknowledged writes: the master fences every log folder a
 *       tablet's placement names before the tablet opens anywhere (docs/fencing.md, "Before a
 *       tablet opens"), this new life's opens included, so no tablet is served from a log its
 *       writer may still add to. The start-time fence only makes a resumed earlier life stop
 *       sooner (its writes to tablets that are not moving stop being acknowledged, and its own
 *       look stops it).
 *   <li>Once no tablet in the master's directory names a folder (every tablet that had writes in it has
 *       been opened again and flushed what it replayed), its segments and recovery pieces are
 *       deleted ({@link #sweep}), but the folder and its {@link Storage#FENCE_MARKER} stay, as a
 *       tombstone: the fence must outlive the files it protects, or a process of that life that
 *       resumes later finds no fence and acknowledges writes nobody will ever read
 *       (docs/fencing.md; {@code SameNameRestartTest}).
 * </ul>
 * Only the folders this life found when it started, and only once it has fenced them: never a
 * folder that appeared later, which is a later life's (this life, frozen and resumed after a
 * new one started, must not take the new one for an earlier one: it did, and emptied the new
 * life's log), and nothing once this life stops (its own log lost, or its actor system shutting
 * down). Only this node's own folders: another node's earlier lives are that node's to sweep
 * (or the recovery's, when it never comes back). Runs on {@code io}, one sweep at a time, and
 * one round of fences at a time. Thread-safe.
 */
final class LogSweeper {
  private static final Logger LOG = LoggerFactory.getLogger(LogSweeper.class);

  /** How long a start waits for the fences of its earlier lives' folders before it goes on without them. */
  static final Duration START_WAIT = Duration.ofSeconds(10);
  /** How often the node sweeps while folders of its earlier lives may hold files ({@link #sweep}). */
  static final Duration SWEEP_EVERY = Duration.ofSeconds(5);
  /**
   * A folder found empty this long after it was first found empty is not swept again: by then
   * no recovery still sorts pieces into it (another node replaying it may write there).
   */
  static final Duration RETIRE_AFTER = Duration.ofMinutes(10);
  /** How long after a round of fences that left a folder unfenced the next round starts. */
  static final Duration RETRY_AFTER = Duration.ofSeconds(30);

  private final Storage storage;
  private final String node;
  private final String current;
  private final Executor io;
  private final AtomicBoolean running = new AtomicBoolean();
  /** Whether this life stops (its own log lost, its actor system shutting down): it sweeps and fences nothing more. */
  private final BooleanSupplier stopping;
  /** Runs a task on {@code io} after {@link #RETRY_AFTER}: the next round of fences. */
  private final Consumer<Runnable> later;
  /** The folders of earlier lives found at this life's start and fenced since: the only ones it may empty. */
  private final Set<String> earlier = ConcurrentHashMap.newKeySet();
  /** When each folder of {@link #earlier} was first found empty, of those found empty since (nanoTime). */
  private final Map<String, Long> emptySince = new ConcurrentHashMap<>();
  private volatile long retireAfterNanos = RETIRE_AFTER.toNanos();
  /** The folders of earlier lives found at this life's start and not fenced yet. */
  private final Set<String> unfenced = ConcurrentHashMap.newKeySet();
  /** The folders whose fence failed, each logged once (at its first failure). */
  private final Set<String> failed = ConcurrentHashMap.newKeySet();

  /**
   * @param stopping whether this life stops: its own log is lost, or its actor system shuts down
   * @param later runs a task on {@code io} after {@link #RETRY_AFTER} (the node's scheduler)
   */
  LogSweeper(Storage storage, String node, String current, Executor io, BooleanSupplier stopping,
      Consumer<Runnable> later) {
    this.storage = storage;
    this.node = node;
    this.current = current;
    this.io = io;
    this.stopping = stopping;
    this.later = later;
  }

  /** The log folder name of incarnation {@code incarnation} of node {@code node}. */
  static String folder(String node, String incarnation) {
    return node + "." + incarnation;
  }

  /**
   * Fences every commit-log folder of node {@code node} (each of its lives, docs/fencing.md) but
   * those named in {@code spare} (the lives of its live members): a life that still runs
   * acknowledges nothing more. Only on the cluster's storage root: the root's identity is read
   * first and must be {@code rootId} (the root {@code rootName} this node started on). Returns
   * the folders fenced: none if the node has no folder on this root but those spared. Blocks on
   * file I/O.
   *
   * @throws RootMismatchException if the root is not the cluster's: nothing is fenced (the
   *     markers would be where no writer of the cluster looks, and a recovery after them would
   *     find the node's logs absent)
   */
  static List<String> fenceAll(Storage storage, String rootName, UUID rootId, String node, Set<String> spare)
      throws IOException {
    RootIdentity.check(storage, rootName, rootId, "node " + node + "'s commit logs are not fenced");
    List<String> fenced = new java.util.ArrayList<>();
    for (String f : folders(storage, node)) {
      if (!spare.contains(f)) {
        storage.fence(Storage.path("logs", f));
        fenced.add(f);
      }
    }
    return fenced;
  }

  /**
   * Fences the commit-log folders {@code folders} (names under {@code logs/}, each named by a
   * tablet's placement), before a tablet opens elsewhere, on the cluster's storage root only
   * (as {@link #fenceAll}). A named folder must exist: a log makes its folder when it opens, and
   * nothing removes it (a later life of its node keeps it, with its marker, as a tombstone), so
   * one that is missing was written on another root (a copy of this one, another mount).
   * Fencing it here would make it, holding only the marker, and the next opener would replay
   * that empty folder as the log, losing every write it acknowledged. Blocks on file I/O.
   *
   * @throws RootMismatchException if the root is not the cluster's: nothing is fenced
   * @throws LogFolderMissingException if a folder is missing: it is not made, and the folders
   *     after it are not fenced
   */
  static void fenceNamed(Storage storage, String rootName, UUID rootId, java.util.Collection<String> folders)
      throws IOException {
    RootIdentity.check(storage, rootName, rootId, "the commit logs " + folders + " are not fenced");
    for (String f : folders) {
      String dir = Storage.path("logs", f);
      if (!storage.exists(dir)) {
        throw new LogFolderMissingException(dir);
      }
      storage.fence(dir);
    }
  }

  /** The names under {@code logs/} of every commit-log folder of node {@code node} (each of its lives). */
  static List<String> folders(Storage storage, String node) throws IOException {
    List<String> out = new java.util.ArrayList<>();
    for (String f : storage.list("logs")) {
      if (f.startsWith(node + ".") || f.equals(node)) {
        out.add(f);
      }
    }
    return out;
  }

  /**
   * Fences every folder of an earlier life of this node, so that a process of that life that
   * still runs acknowledges nothing more, waiting up to {@code wait} for the fences. A fence that
   * fails, or is not done by then, does not fail this call: it is logged once, with why, and
   * tried again (every {@link #RETRY_AFTER}) in the background until it is made or this life
   * stops (the class comment says why that is safe). The node calls it at start, before it
   * serves. Blocks on file I/O.
   *
   * @throws IOException if the folders cannot be listed: which earlier lives there are is then
   *     not known, and a folder listed later may be a later life's (the node does not start)
   */
  void fenceEarlierLives(Duration wait) throws IOException {
    for (String f : folders(storage, node)) {
      if (!f.equals(current)) {
        unfenced.add(f);
      }
    }
    CompletableFuture<Void> round = CompletableFuture.runAsync(this::fenceRound, io);
    try {
      round.get(wait.toMillis(), TimeUnit.MILLISECONDS);
    } catch (TimeoutException e) {
      LOG.warn("fencing the commit logs of this node's earlier lives {} takes longer than {}: the node starts "
          + "without waiting for it, and it goes on in the background (the master fences every log a tablet names "
          + "before the tablet opens)", List.copyOf(unfenced), wait);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new java.io.InterruptedIOException("interrupted while fencing the commit logs of earlier lives");
    } catch (ExecutionException e) {
      throw new IllegalStateException("fencing the commit logs of earlier lives failed", e.getCause());
    }
  }

  /**
   * One round of fences: each earlier life's folder not fenced yet. One that fails stays for the
   * next round, which starts {@link #RETRY_AFTER} after this one ends (so rounds never overlap).
   */
  private void fenceRound() {
    for (String f : List.copyOf(unfenced)) {
      try {
        storage.fence(Storage.path("logs", f));
      } catch (IOException | UncheckedIOException e) {
        if (failed.add(f)) {
          LOG.warn("could not fence the commit log logs/{} of an earlier life of this node: {}. The node goes on, "
              + "and tries again every {} s", f, e.toString(), RETRY_AFTER.toSeconds());
        }
        continue;
      }
      earlier.add(f);
      unfenced.remove(f);
      if (failed.contains(f)) {
        LOG.info("fenced the commit log logs/{} of an earlier life of this node, which had failed before", f);
      }
    }
    if (!unfenced.isEmpty() && !stopping.getAsBoolean()) {
      later.accept(this::fenceRound);
    }
  }

  /**
   * Sweeps once, off the caller's thread: asks {@code named} which of the folders it may empty a
   * placement still names (the master's directory: a node's own copy need not hold the tablets
   * that moved away from it, whose placements may name its earlier lives' logs), and empties the
   * others. A folder found empty at sweeps {@link #RETIRE_AFTER} apart is not asked about
   * again. Nothing when the ask fails: the next sweep asks again.
   */
  void sweep(Function<List<String>, CompletionStage<List<String>>> named) {
    List<String> folders = List.copyOf(earlier);
    if (folders.isEmpty() || stopping.getAsBoolean() || !running.compareAndSet(false, true)) {
      return;
    }
    CompletionStage<List<String>> asked;
    try {
      asked = named.apply(folders);
    } catch (RuntimeException e) { // the ask could not be sent (the node stops): a throw would end the schedule
      running.set(false);
      LOG.warn("could not ask which old commit-log folders a tablet still names; the next sweep asks again", e);
      return;
    }
    asked.whenCompleteAsync((names, err) -> {
      try {
        if (err != null) {
          LOG.debug("could not ask which old commit-log folders a tablet still names; the next sweep asks again", err);
          return;
        }
        Set<String> keep = Set.copyOf(names);
        for (String f : folders) {
          if (stopping.getAsBoolean()) {
            return;
          }
          if (keep.contains(f) || empty(Storage.path("logs", f))) {
            emptySince.remove(f);
            continue;
          }
          long now = System.nanoTime();
          Long first = emptySince.putIfAbsent(f, now);
          if (first != null && now - first >= retireAfterNanos) {
            earlier.remove(f);
            emptySince.remove(f);
          }
        }
      } catch (IOException | RuntimeException e) {
        LOG.warn("could not empty an old commit-log folder; the next sweep tries again: {}", e.toString());
      } finally {
        running.set(false);
      }
    }, io);
  }

  /** Sets how long after a folder was first found empty it is retired ({@link #RETIRE_AFTER}); for tests. */
  void retireAfter(Duration d) {
    retireAfterNanos = d.toNanos();
  }

  /** What {@link #sweep} asks: the master, which folders a placement of its directory names. */
  static Function<List<String>, CompletionStage<List<String>>> askingMaster(ActorRef<Master.Command> master,
      ActorSystem<?> system, Duration timeout) {
    return folders -> AskPattern.<Master.Command, Master.Names>ask(master,
        r -> new Master.NamedLogs(folders, r), timeout, system.scheduler()).thenApply(Master.Names::names);
  }

  /**
   * Deletes what folder {@code dir} holds but its fence marker, fencing it first if it is not
   * yet; false when it held nothing else.
   */
  private boolean empty(String dir) throws IOException {
    List<String> names = storage.list(dir);
    if (!names.contains(Storage.FENCE_MARKER)) {
      storage.fence(dir);
    }
    List<String> files = names.stream().filter(n -> !n.equals(Storage.FENCE_MARKER)).toList();
    if (files.isEmpty()) {
      return false;
    }
    for (String f : files) {
      storage.delete(Storage.path(dir, f));
    }
    LOG.info("emptied the commit log {} of an earlier life of this node ({} files): no tablet needs it; its fence "
        + "marker stays", dir, files.size());
    return true;
  }
}
