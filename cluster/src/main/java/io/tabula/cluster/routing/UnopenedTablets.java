package io.tabula.cluster.routing;

import io.tabula.actors.master.Directory;
import io.tabula.actors.master.DirectoryCache;
import io.tabula.actors.master.Master;
import io.tabula.actors.master.TabletInfo;
import io.tabula.actors.master.TabletPlacement;
import io.tabula.actors.tablet.LocalTablets;
import io.tabula.persistence.storage.Storage;
import io.tabula.persistence.tablet.ManifestCodec;
import io.tabula.persistence.tablet.Tablet;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;

/**
 * Which tablets were never opened, so that a scan, a {@code SampleRowKeys} or a
 * {@code DropRowRange} passes them by instead of starting their actors: a tablet opens at its
 * first request (docs/cluster.md, "Tablets open when first asked"), and a table of 100,000
 * initial splits nobody wrote to would otherwise open all of them at its first scan.
 *
 * <p>The argument, for a request that began at {@code since}:
 * <ul>
 *   <li>A tablet takes a write only once it is open, and it opens only by publishing its
 *       manifest on the shared storage first (a split's or a merge's children have theirs
 *       written before the master records them): <b>a tablet without a manifest holds no
 *       row</b>. The storage is read-after-write consistent across nodes (HDFS; local files;
 *       NFS only as {@code NfsMounts} checks it is mounted), and it is looked at after
 *       {@code since}: a write acknowledged before the request began is seen.
 *   <li>The tablet must still be in the directory, as the master had it at {@code since} or
 *       later: after the look, the node's copy has taken the master's answer to an ask sent
 *       after {@code since} (one ask per request, shared), and still holds the tablet with no
 *       log and no file. A copy that lagged (a table deleted and made again, a split or merge
 *       it had not heard of) would otherwise pass by a tablet that no longer holds the rows,
 *       and never ask the one that does; such a tablet is asked instead, and answers that the
 *       row moved, as before.
 *   <li>The one way a tablet of the directory loses its manifest is the master's sweep deleting
 *       the folder of a tablet gone from the directory, once it has been gone for
 *       {@code tabula.master.sweep-files-grace}. A look may come long after {@code since} (a
 *       slow reader of a long scan), so the copy must also have been confirmed as the master's
 *       within a quarter of that grace, at most 30 s, after the look.
 * </ul>
 * Otherwise the answer is "ask it": for a tablet served here, one whose placement names a log,
 * one the directory knows files of, and when the storage or the master cannot be asked.
 *
 * <p>Looks run on the blocking-I/O dispatcher (an HDFS look is a call to its name node), one
 * per tablet of a scan as the scan comes to it, and one task after another for the tablets of
 * a whole-table request, so a request over 100,000 tablets holds one thread of that pool, not
 * all of them. Thread-safe.
 */
public final class UnopenedTablets {
  private final LocalTablets local;
  private final DirectoryCache directory;
  private final Storage storage;
  private final Executor blockingIo;
  private final Duration confirmedWithin;
  private final ActorRef<Master.Command> master;
  private final ActorSystem<?> system;
  private final Duration askTimeout;
  /** How many tablets were passed by as never opened (for tests and metrics). */
  private final AtomicLong passedBy = new AtomicLong();
  /** Tablets a whole-table request looks at in one task of the blocking-I/O dispatcher. */
  private static final int LOOKS_PER_TASK = 1_000;

  /**
   * @param sweepGrace the master's {@code tabula.master.sweep-files-grace} (every node's: a
   *     node with another value is refused at join, {@code SharedSettingsCheck})
   * @param blockingIo where the storage is looked at
   */
  public UnopenedTablets(LocalTablets local, DirectoryCache directory, Storage storage, Duration sweepGrace,
      Executor blockingIo, ActorRef<Master.Command> master, ActorSystem<?> system, Duration askTimeout) {
    this.local = local;
    this.directory = directory;
    this.storage = storage;
    this.blockingIo = blockingIo;
    this.master = master;
    this.system = system;
    this.askTimeout = askTimeout;
    Duration quarter = sweepGrace.dividedBy(4);
    this.confirmedWithin = quarter.compareTo(Duration.ofSeconds(30)) < 0 ? quarter : Duration.ofSeconds(30);
  }

  /**
   * Whether tablet {@code t} was never opened, so holds no row, for a request that began at
   * {@code since} (System.nanoTime): true only when that is known (see the class comment);
   * false means "ask the tablet".
   */
  public CompletionStage<Boolean> holdsNothing(TabletInfo t, long since) {
    if (!candidate(directory.get(), t)) {
      return CompletableFuture.completedFuture(false);
    }
    return CompletableFuture.supplyAsync(() -> withoutManifest(List.of(t)), blockingIo)
        .thenCompose(none -> confirmed(none, since)).thenApply(ids -> ids.contains(t.id()))
        .exceptionally(err -> false);
  }

  /** The ids of those of {@code tablets} that were never opened, for a request that began at {@code since}. */
  public CompletionStage<Set<String>> holdingNothing(List<TabletInfo> tablets, long since) {
    Directory d = directory.get();
    List<TabletInfo> candidates = tablets.stream().filter(t -> candidate(d, t)).toList();
    if (candidates.isEmpty()) {
      return CompletableFuture.completedFuture(Set.of());
    }
    CompletableFuture<List<String>> looked = CompletableFuture.completedFuture(new ArrayList<>());
    for (int from = 0; from < candidates.size(); from += LOOKS_PER_TASK) {
      List<TabletInfo> part = candidates.subList(from, Math.min(candidates.size(), from + LOOKS_PER_TASK));
      looked = looked.thenApplyAsync(acc -> {
        acc.addAll(withoutManifest(part));
        return acc;
      }, blockingIo);
    }
    return looked.thenCompose(none -> confirmed(none, since)).exceptionally(err -> Set.of());
  }

  /**
   * Whether {@code t} may have never opened, by what this node knows without a look: it is not
   * served here, and the node's copy of the directory names no file and no log of it ({@code t}
   * itself may be a location, which names no file). A tablet the copy does not know yet (a new
   * table's, looked up from the master) may be: {@link #confirmed} decides on a copy that has
   * caught up.
   */
  private boolean candidate(Directory d, TabletInfo t) {
    TabletInfo known = d.tablet(t.id());
    if (local.reads(t.id()) != null || (known != null && !known.files().isEmpty())) {
      return false;
    }
    TabletPlacement p = d.placementOf(t.id());
    return p == null || p.logs().isEmpty();
  }

  /** The ids of those of {@code tablets} without a manifest on the storage now. Blocks. */
  private List<String> withoutManifest(List<TabletInfo> tablets) {
    List<String> out = new ArrayList<>();
    for (TabletInfo t : tablets) {
      try {
        if (!ManifestCodec.exists(storage, Tablet.dirOf(t.table(), t.id()))) {
          out.add(t.id());
        }
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
    return out;
  }

  /**
   * Those of {@code ids} (tablets seen without a manifest) that the node's copy, once it has
   * the master's answer to an ask sent after {@code since}, still holds with no log and no file,
   * while the copy was confirmed as the master's recently.
   */
  private CompletionStage<Set<String>> confirmed(List<String> ids, long since) {
    if (ids.isEmpty()) {
      return CompletableFuture.completedFuture(Set.of());
    }
    return answeredSince(since).thenApply(x -> {
      if (!directory.answeredSince(since) || !directory.confirmedWithin(confirmedWithin)) {
        return Set.<String>of();
      }
      Directory d = directory.get();
      Set<String> out = new HashSet<>();
      for (String id : ids) {
        TabletInfo now = d.tablet(id);
        TabletPlacement p = d.placementOf(id);
        if (now != null && now.files().isEmpty() && (p == null || p.logs().isEmpty())) {
          out.add(id);
        }
      }
      passedBy.addAndGet(out.size());
      return out;
    });
  }

  /**
   * Completes once the copy took the answer to an ask of the master sent at or after
   * {@code since}: at once if it has, else after one refresh, or two when the first was an
   * ask already under way when it was made.
   */
  private CompletionStage<?> answeredSince(long since) {
    if (directory.answeredSince(since)) {
      return CompletableFuture.completedFuture(null);
    }
    return directory.refresh(master, system, askTimeout).thenCompose(d -> directory.answeredSince(since)
        ? CompletableFuture.completedFuture(d) : directory.refresh(master, system, askTimeout));
  }

  /** How many tablets were passed by as never opened since the node started. */
  public long passedBy() {
    return passedBy.get();
  }
}
