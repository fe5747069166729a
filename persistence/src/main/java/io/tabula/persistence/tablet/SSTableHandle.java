package io.tabula.persistence.tablet;

import io.tabula.persistence.cache.ScanCache;
import io.tabula.persistence.sstable.SSTableReader;
import io.tabula.persistence.storage.Storage;
import java.io.IOException;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * An open SSTable of one tablet, counted by the {@link TabletVersion}s that hold it.
 *
 * <p>Invariants: (1) every live version holding the handle has retained it once; (2) when
 * the count falls to zero the reader is closed, and the file deleted if a compaction
 * replaced it and the tablet owns it. Thread-safe.
 */
final class SSTableHandle {
  private final Storage storage;
  private final String path;
  private final boolean owned;
  /** Set once, by the tablet's files lock, when a backup names the file; read by whichever thread releases it last. */
  private volatile boolean disowned;
  private final SSTableReader reader;
  private final AtomicInteger refs = new AtomicInteger();
  private volatile boolean obsolete;
  private final BackgroundFailures failures;
  /** The node's scan cache, which drops this file's rows when the reader closes; null if none. */
  private final ScanCache scanCache;

  SSTableHandle(Storage storage, String path, boolean owned, SSTableReader reader, BackgroundFailures failures,
      ScanCache scanCache) {
    this.failures = failures;
    this.scanCache = scanCache;
    this.storage = storage;
    this.path = path;
    this.owned = owned;
    this.reader = reader;
  }

  String path() {
    return path;
  }

  /** Whether this tablet may delete the file once a compaction replaced it: it wrote it, and no backup named it. */
  boolean owned() {
    return owned && !disowned;
  }

  /** A backup names the file (docs/backups.md): the tablet never deletes it; the master's sweep may. */
  void disown() {
    disowned = true;
  }

  SSTableReader reader() {
    return reader;
  }

  void retain() {
    refs.incrementAndGet();
  }

  /**
   * Closes a handle no version ever held (an open or a compaction that failed half-way);
   * {@code deleteFile}: the file was written for it and is garbage now.
   */
  void discard(boolean deleteFile) {
    if (deleteFile) {
      markObsolete();
    }
    retain();
    release();
  }

  /** Marks the file as replaced by a compaction: it goes when the last reader lets go. */
  void markObsolete() {
    obsolete = true;
  }

  /**
   * Lets go of one reference. A file that cannot be closed or deleted is left where it is:
   * it is garbage no manifest names, for the master's sweep (paper §6) to collect; no
   * reader or writer of the tablet is the worse for it.
   */
  void release() {
    if (refs.decrementAndGet() == 0) {
      try {
        reader.close();
        if (scanCache != null) {
          scanCache.invalidateFile(reader.scanCacheId());
        }
        if (obsolete && owned()) {
          storage.delete(path);
        }
      } catch (IOException e) {
        failures.report("closing or deleting SSTable " + path + " (left behind for the master's sweep)", e);
      }
    }
  }
}
