package io.tabula.actors.journal;

import com.typesafe.config.Config;
import io.tabula.persistence.journal.MasterJournal;
import io.tabula.persistence.storage.FileStorage;
import io.tabula.persistence.storage.Storage;
import java.io.IOException;
import java.nio.file.Path;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.BooleanSupplier;
import org.apache.pekko.actor.AbstractExtensionId;
import org.apache.pekko.actor.ActorSystem;
import org.apache.pekko.actor.ExtendedActorSystem;
import org.apache.pekko.actor.Extension;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The master's journal of one actor system ({@link MasterJournal} on the storage root), shared
 * by its two Pekko plugins ({@link FileJournal} for events, {@link FileSnapshotStore} for
 * snapshots, both stored in the one journal so that a snapshot is part of the history exactly
 * when the events before it are).
 *
 * <p>A persistent actor's recovery starts with loading its snapshot: that call {@linkplain
 * #recover opens} the journal as a new epoch, fencing every older master. Everything after it
 * (the replay, the writes) goes to that epoch. All journal I/O runs on this extension's one
 * thread, in the order it was asked for; the plugins' actors never block.
 *
 * <p>A node {@linkplain #use registers} its storage root and a guard that says whether this
 * node may be master now (it holds the master lease): a recovery without it fails, so a master
 * that resumes after its lease was taken cannot fence the new one. Without registration the
 * journal lives under {@code tabula.master-journal.root} with no guard (tests, tools).
 *
 * <p>Thread-safe: the fields are written by {@link #use} before the master starts and by the
 * journal thread; {@code volatile} publishes them.
 */
public final class MasterJournals implements Extension {
  private static final Logger LOG = LoggerFactory.getLogger(MasterJournals.class);

  public static final Id ID = new Id();

  /** The extension's id. */
  public static final class Id extends AbstractExtensionId<MasterJournals> {
    @Override
    public MasterJournals createExtension(ExtendedActorSystem system) {
      return new MasterJournals(system);
    }
  }

  public static MasterJournals get(ActorSystem system) {
    return ID.get(system);
  }

  private final Config config;
  private final ExecutorService io;
  private volatile Storage storage;
  private volatile BooleanSupplier mayOpen = () -> true;
  /** The epoch in use; written only on the journal thread. */
  private volatile MasterJournal current;

  private MasterJournals(ExtendedActorSystem system) {
    this.config = system.settings().config().getConfig("tabula.master-journal");
    this.io = Executors.newSingleThreadExecutor(r -> {
      Thread t = new Thread(r, "tabula-master-journal");
      t.setDaemon(true);
      return t;
    });
    system.registerOnTermination(() -> {
      io.execute(this::closeCurrent);
      io.shutdown();
    });
  }

  /**
   * Keeps the journal on {@code storage} and opens it only while {@code mayOpen} says so (the
   * node holds the master lease). Call before the master starts.
   */
  public void use(Storage storage, BooleanSupplier mayOpen) {
    this.storage = storage;
    this.mayOpen = mayOpen;
  }

  /** The journal's folder under the storage root. */
  String dir() {
    return config.getString("dir");
  }

  /**
   * Opens the journal as a new epoch (closing the one in use), then runs {@code work} with it on
   * the journal thread: the start of a recovery.
   */
  <T> CompletionStage<T> withRecovered(JournalWork<T> work) {
    return run(() -> work.call(openEpoch()));
  }

  /**
   * Runs {@code work} on the journal thread with the epoch in use (opened first if there is
   * none: a write or replay without a recovery before it), then renews the epoch if it is due
   * ({@link #renewIfDue}).
   */
  <T> CompletionStage<T> withCurrent(JournalWork<T> work) {
    return run(() -> {
      MasterJournal j = current;
      T out = work.call(j != null ? j : openEpoch());
      renewIfDue();
      return out;
    });
  }

  /** Work on the epoch in use, on the journal thread. */
  @FunctionalInterface
  interface JournalWork<T> {
    T call(MasterJournal journal) throws IOException;
  }

  private MasterJournal openEpoch() throws IOException {
    closeCurrent();
    if (!mayOpen.getAsBoolean()) {
      throw new NotMasterException();
    }
    MasterJournal opened = MasterJournal.open(storage(), dir(), config.getBytes("segment-size"));
    LOG.info("master journal opened: {}", opened);
    current = opened;
    return opened;
  }

  /**
   * Renews the epoch in use ({@link MasterJournal#successor}) once it has appended {@code
   * tabula.master-journal.renew-after} and twice the live history it read at its open: the
   * segments whose every record is dead (each snapshot the size of the directory, taken every
   * few thousand events) go then, not at the next master's start, and the renewal reads at most
   * about as much as was appended since the last. Only while this node may be master; a renewal
   * that finds a newer master's epoch leaves the stale one in use, whose next append fails.
   */
  private void renewIfDue() {
    MasterJournal j = current;
    if (j == null || j.appendedBytes() < Math.max(config.getBytes("renew-after"), 2 * j.keptBytesAtOpen())
        || !mayOpen.getAsBoolean()) {
      return;
    }
    try {
      MasterJournal next = j.successor();
      current = next;
      LOG.info("master journal renewed after {} MiB appended to epoch {}: {}", j.appendedBytes() >> 20, j.epoch(),
          next);
    } catch (io.tabula.persistence.journal.JournalFencedException e) {
      LOG.warn("the master's journal epoch {} was not renewed: it is not the newest (another master's epoch, or "
          + "a claim left by a renewal that failed)", j.epoch());
    } catch (IOException | RuntimeException e) {
      // The work before it is done and stands. The epoch in use may be fenced by the half-made
      // successor: its next append fails, and the master starts again on a new epoch.
      LOG.error("renewing the master's journal epoch {} failed", j.epoch(), e);
    }
  }

  /**
   * Whether this node's master has the journal now: it opened an epoch, and no newer master
   * has fenced it since (a look at the storage, on the caller's thread). The file sweep asks it
   * before each batch of deletions.
   */
  public boolean holdsJournal() {
    MasterJournal j = current;
    return j != null && !j.isFenced();
  }

  /** Runs {@code work} on the journal thread. */
  private <T> CompletionStage<T> run(IoWork<T> work) {
    return CompletableFuture.supplyAsync(() -> {
      try {
        return work.call();
      } catch (IOException e) {
        throw new java.util.concurrent.CompletionException(e);
      }
    }, io);
  }

  /** Journal work that may fail with an {@link IOException}. */
  @FunctionalInterface
  interface IoWork<T> {
    T call() throws IOException;
  }

  private Storage storage() throws IOException {
    Storage s = storage;
    if (s == null) {
      String root = config.getString("root");
      if (root.isBlank()) {
        throw new IOException("the master's journal has no storage: a node registers its root "
            + "(MasterJournals.use); without a node set tabula.master-journal.root");
      }
      s = new FileStorage(Path.of(root));
      storage = s;
    }
    return s;
  }

  private void closeCurrent() {
    MasterJournal j = current;
    current = null;
    if (j != null) {
      try {
        j.close();
      } catch (IOException e) {
        LOG.warn("closing the master's journal epoch {} failed", j.epoch(), e);
      }
    }
  }

  /** A recovery was refused: this node does not hold the master lease (any more). */
  public static final class NotMasterException extends IOException {
    private static final long serialVersionUID = 1L;

    NotMasterException() {
      super("this node does not hold the master lease: the master's journal is not opened here");
    }
  }
}
