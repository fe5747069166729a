package io.tabula.cluster.routing;

import io.tabula.actors.Stages;
import io.tabula.actors.master.Directory;
import io.tabula.actors.master.DirectoryCache;
import io.tabula.actors.master.Master;
import io.tabula.actors.master.TabletInfo;
import io.tabula.actors.master.TabletLookup;
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
import org.apache.pekko.actor.typed.javadsl.AskPattern;

/**
 * Which tablets were never opened, so that a scan, a {@code SampleRowKeys} or a
 * {@code DropRowRange} passes them by instead of starting their actors: a tablet opens at its
 * first request (docs/cluster.md, "Tablets open when first asked"), and a table of 100,000
 * initial splits nobody wrote to would otherwise open all of them at its first scan.
 *
 * <p>The argument, for a request under way:
 * <ul>
 *   <li>A tablet takes a write only once it is open, and it opens only by publishing its
 *       manifest on the shared storage first (a split's or a merge's children have theirs
 *       written before the master records them): <b>a tablet without a manifest holds no
 *       row</b>. The storage is read-after-write consistent across nodes (HDFS; local files;
 *       NFS only as {@code NfsMounts} checks it is mounted), and it is looked at after the
 *       request began: a write acknowledged before then is seen.
 *   <li>The tablet must still be in the master's directory when it is asked, after the look,
 *       with no file and no log named ({@link Master.NeverWritten}). A tablet the directory
 *       no longer has (a table deleted and made again, a split or merge the node's cache had
 *       not heard of) would otherwise be passed by while it no longer holds the rows, and the
 *       one that does never asked; such a tablet is asked instead, and answers that the row
 *       moved, as before.
 *   <li>The one way a tablet of the directory loses its manifest is the master's sweep deleting
 *       the folder of a tablet gone from the directory. The tablet asked about came from the
 *       master's directory before the look (a lookup), and a tablet gone from the directory never
 *       comes back (ids are never reused): one the directory still has after the look was in
 *       it throughout, so its folder was not swept.
 *       The node's own copy of the directory is not relied on: it need not hold the tablet.
 * </ul>
 * Otherwise the answer is "ask it": for a tablet served here, one whose placement names a log,
 * one the directory knows files of, and when the storage or the master cannot be asked. The
 * master is asked about {@link TabletLookup#MOST_TABLETS} tablets at a time.
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
  private final ActorRef<Master.Command> master;
  private final ActorSystem<?> system;
  private final Duration askTimeout;
  /** How many tablets were passed by as never opened (for tests and metrics). */
  private final AtomicLong passedBy = new AtomicLong();
  /** Tablets a whole-table request looks at in one task of the blocking-I/O dispatcher. */
  private static final int LOOKS_PER_TASK = 1_000;

  /**
   * @param directory the node's copy, which saves a look for the tablets it knows were written
   * @param blockingIo where the storage is looked at
   */
  public UnopenedTablets(LocalTablets local, DirectoryCache directory, Storage storage, Executor blockingIo, ActorRef<Master.Command> master, ActorSystem<?> system, Duration askTimeout) {
    this.local = local;
    this.directory = directory;
    this.storage = storage;
    this.blockingIo = blockingIo;
    this.master = master;
    this.system = system;
    this.askTimeout = askTimeout;
  }

  /**
   * Whether tablet {@code t} was never opened, so holds no row, for a request under way (it
   * looks now): true only when that is known (see the class comment); false means "ask the
   * tablet".
   */
  public CompletionStage<Boolean> holdsNothing(TabletInfo t) {
    if (!candidate(directory.get(), t)) {
      return CompletableFuture.completedFuture(false);
    }
    return CompletableFuture.supplyAsync(() -> withoutManifest(List.of(t)), blockingIo)
        .thenCompose(this::confirmed).thenApply(ids -> ids.contains(t.id()))
        .exceptionally(err -> false);
  }

  /** The ids of those of {@code tablets} that were never opened, for a request under way. */
  public CompletionStage<Set<String>> holdingNothing(List<TabletInfo> tablets) {
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
    return looked.thenCompose(this::confirmed).exceptionally(err -> Set.of());
  }

  /**
   * Whether {@code t} may have never opened, by what this node knows without a look: it is not
   * served here, and the node's copy of the directory names no file and no log of it ({@code t}
   * itself may be a location, which names no file). A tablet the copy does not hold may be:
   * {@link #confirmed} decides with the master.
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
   * Those of {@code ids} (tablets seen without a manifest) that the master's directory, asked
   * after the look, still has with no file and no log named ({@link Master.NeverWritten}),
   * {@link TabletLookup#MOST_TABLETS} per ask, one ask after another.
   */
  private CompletionStage<Set<String>> confirmed(List<String> ids) {
    CompletionStage<Set<String>> out = CompletableFuture.completedFuture(new HashSet<>());
    for (int from = 0; from < ids.size(); from += TabletLookup.MOST_TABLETS) {
      List<String> part = List.copyOf(ids.subList(from, Math.min(ids.size(), from + TabletLookup.MOST_TABLETS)));
      out = out.thenCompose(acc -> Stages.direct(AskPattern.<Master.Command, Master.Names>ask(master,
          r -> new Master.NeverWritten(part, r), askTimeout, system.scheduler())).thenApply(names -> {
            acc.addAll(names.names());
            return acc;
          }));
    }
    return out.thenApply(found -> {
      passedBy.addAndGet(found.size());
      return found;
    });
  }

  /** How many tablets were passed by as never opened since the node started. */
  public long passedBy() {
    return passedBy.get();
  }
}
