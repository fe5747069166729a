package io.tabula.cluster.routing;

import io.tabula.actors.master.DirectoryCache;
import io.tabula.actors.master.TabletInfo;
import io.tabula.actors.master.TabletPlacement;
import io.tabula.actors.tablet.LocalTablets;
import io.tabula.persistence.storage.Storage;
import io.tabula.persistence.tablet.ManifestCodec;
import io.tabula.persistence.tablet.Tablet;
import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Which tablets were never opened, so that a scan, a {@code SampleRowKeys} or a
 * {@code DropRowRange} passes them by instead of starting their actors: a tablet opens at its
 * first request (docs/cluster.md, "Tablets open when first asked"), and a table of 100,000
 * initial splits nobody wrote to would otherwise open all of them at its first scan.
 *
 * <p>The argument: a tablet takes a write only once it is open, and it opens only by publishing
 * its manifest on the shared storage first (a split's or a merge's children have theirs
 * written before the master records them), so <b>a tablet without a manifest holds no
 * data</b>. The storage is read-after-write consistent across nodes (HDFS; local files; NFS
 * only as {@code NfsMounts} checks it is mounted), so a write acknowledged before the look
 * began is seen by it. The one way a known tablet loses its manifest is the master's sweep
 * deleting the folder of a tablet gone from the directory, which it does only once the tablet
 * has been gone for {@code tabula.master.sweep-files-grace}; so the answer "holds nothing" is
 * given only while this node's copy of the directory was confirmed as the master's within a
 * quarter of that grace (at most 30 s), checked after the storage was looked at. Otherwise,
 * and for a tablet served here, one whose placement names a log, or one the directory knows
 * files of, the answer is "ask it". Thread-safe.
 */
public final class UnopenedTablets {
  private final LocalTablets local;
  private final DirectoryCache directory;
  private final Storage storage;
  private final Executor blockingIo;
  private final Duration confirmedWithin;
  /** How many times a tablet was passed by as never opened (for tests and metrics). */
  private final AtomicLong passedBy = new AtomicLong();

  /**
   * @param sweepGrace the master's {@code tabula.master.sweep-files-grace}
   * @param blockingIo where the storage is looked at (an HDFS look is a call to its name node)
   */
  public UnopenedTablets(LocalTablets local, DirectoryCache directory, Storage storage, Duration sweepGrace,
      Executor blockingIo) {
    this.local = local;
    this.directory = directory;
    this.storage = storage;
    this.blockingIo = blockingIo;
    Duration quarter = sweepGrace.dividedBy(4);
    this.confirmedWithin = quarter.compareTo(Duration.ofSeconds(30)) < 0 ? quarter : Duration.ofSeconds(30);
  }

  /**
   * Whether tablet {@code t} was never opened, so holds no row: true only when that is known
   * (see the class comment); false means "ask the tablet". A failure to look at the storage is
   * false too: the tablet's actor then answers, or fails the request as it would have.
   */
  public CompletionStage<Boolean> holdsNothing(TabletInfo t) {
    if (local.reads(t.id()) != null || !t.files().isEmpty()) {
      return CompletableFuture.completedFuture(false);
    }
    TabletPlacement p = directory.get().placementOf(t.id());
    if (p != null && !p.logs().isEmpty()) {
      return CompletableFuture.completedFuture(false);
    }
    return CompletableFuture.supplyAsync(() -> {
      String dir = Tablet.dirOf(t.table(), t.id());
      try {
        boolean none = !storage.exists(dir) || !ManifestCodec.exists(storage, dir);
        // Looked at after the storage: the copy still held the tablet this recently.
        if (none && directory.confirmedWithin(confirmedWithin)) {
          passedBy.incrementAndGet();
          return true;
        }
        return false;
      } catch (IOException | java.io.UncheckedIOException e) {
        return false;
      }
    }, blockingIo);
  }

  /** How many times a tablet was passed by as never opened since the node started. */
  public long passedBy() {
    return passedBy.get();
  }
}
