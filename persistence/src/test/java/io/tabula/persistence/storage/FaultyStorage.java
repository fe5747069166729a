package io.tabula.persistence.storage;

import java.io.IOException;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A real {@link Storage} (the files are real) that can be told to misbehave: fail fsyncs,
 * run out of space, and "crash", which cuts every file written through it back to what was
 * last synced plus a random, possibly garbled, part of what was not (a torn write). After a
 * crash this instance is dead, as the process that used it would be: every call fails, so
 * threads of the dead process cannot touch the files; a restarted process opens a new one.
 *
 * <p>Thread-safe: calls hold a shared lock, a crash the exclusive one.
 */
public final class FaultyStorage implements Storage {
  private final Storage delegate;
  private final AtomicBoolean failSyncs = new AtomicBoolean();
  private final AtomicBoolean stallSyncs = new AtomicBoolean();
  private final AtomicLong spaceLeft = new AtomicLong(Long.MAX_VALUE);
  /**
   * Per file written through this storage: {synced up to, written up to, its length before it
   * was opened to be written in place (-1 if it was created)}.
   */
  private final Map<String, long[]> syncedAndWritten = new ConcurrentHashMap<>();
  private final java.util.concurrent.locks.ReentrantReadWriteLock power =
      new java.util.concurrent.locks.ReentrantReadWriteLock();
  private volatile boolean dead;
  private volatile boolean failDeletes;
  /** Files created through this instance and not closed yet. */
  private final java.util.Set<Faulty> open = ConcurrentHashMap.newKeySet();

  public FaultyStorage(Storage delegate) {
    this.delegate = delegate;
  }

  /** From now on every {@code delete()} throws (true) or works again (false). */
  public void failDeletes(boolean fail) {
    failDeletes = fail;
  }

  /** From now on every {@code sync()} throws (true) or works again (false). */
  public void failSyncs(boolean fail) {
    failSyncs.set(fail);
  }

  /**
   * From now on every {@code sync()} waits until {@link #stallSyncs stallSyncs(false)} or a
   * crash, so a crash finds written but unsynced bytes to tear.
   */
  public void stallSyncs(boolean stall) {
    stallSyncs.set(stall);
  }

  /** Appends fail with "no space left" once this many more bytes have been written. */
  public void setSpaceLeft(long bytes) {
    spaceLeft.set(bytes);
  }

  public void unlimitedSpace() {
    spaceLeft.set(Long.MAX_VALUE);
  }

  /**
   * Simulates a power cut: every file written through this storage keeps its synced bytes
   * and either all its unsynced bytes (they reached the disk, the fsync's answer did not) or
   * a random part of them, of which a random stretch may be garbage.
   * This storage is dead afterwards (every call throws).
   */
  public void crash(Random rnd) throws IOException {
    power.writeLock().lock();
    try {
      dead = true;
      tear(rnd);
    } finally {
      power.writeLock().unlock();
    }
  }

  /**
   * Simulates the process dying on a storage that keeps its own copies (HDFS, where what a
   * dead client's files hold is settled by the namenode's lease recovery, not by this
   * process): this instance is dead afterwards. Of the files still open, about half get
   * what was appended to them pushed to the storage first: the bytes reached the datanodes,
   * and the writer died before it heard back (so recovery may find unacknowledged writes).
   */
  public void die(Random rnd) {
    power.writeLock().lock();
    try {
      for (Faulty f : open) {
        if (rnd.nextBoolean()) {
          try {
            f.w.sync();
          } catch (IOException lost) {
            // then they did not reach it
          }
        }
      }
      dead = true;
      syncedAndWritten.clear();
    } finally {
      power.writeLock().unlock();
    }
  }

  private void tear(Random rnd) throws IOException {
    for (Map.Entry<String, long[]> e : syncedAndWritten.entrySet()) {
      String path = e.getKey();
      if (!delegate.exists(path)) {
        continue;
      }
      long synced = e.getValue()[0];
      long overwritten = e.getValue()[2];
      // A file written in place keeps its old bytes (a preallocated segment's zeros) where
      // the new ones did not reach the disk; a created file keeps nothing past what reached it.
      long size = overwritten >= 0 ? e.getValue()[1] : delegate.size(path);
      if (size <= synced) {
        continue;
      }
      boolean reachedDisk = rnd.nextInt(4) == 0; // the data made it, only the fsync's answer did not
      long keep = reachedDisk ? size : Math.min(size, synced + (long) (rnd.nextDouble() * (size - synced + 1)));
      byte[] kept = new byte[(int) (keep - synced)];
      try (ReadableFile r = delegate.open(path)) {
        r.readFully(synced, kept, 0, kept.length);
      }
      if (kept.length > 0 && !reachedDisk && rnd.nextBoolean()) {
        int from = rnd.nextInt(kept.length);
        int to = from + rnd.nextInt(kept.length - from) + 1;
        for (int i = from; i < to; i++) {
          kept[i] = (byte) rnd.nextInt(256);
        }
      }
      byte[] prefix = new byte[(int) synced];
      try (ReadableFile r = delegate.open(path)) {
        r.readFully(0, prefix, 0, prefix.length);
      }
      try (WritableFile w = delegate.create(path)) {
        w.append(prefix);
        w.append(kept);
        if (overwritten > keep) {
          w.append(new byte[(int) (overwritten - keep)]);
        }
        w.sync();
      }
    }
    syncedAndWritten.clear();
  }

  private interface Op<T> {
    T run() throws IOException;
  }

  private <T> T live(Op<T> op) throws IOException {
    power.readLock().lock();
    try {
      if (dead) {
        throw new IOException("injected crash: this process's storage is gone");
      }
      return op.run();
    } finally {
      power.readLock().unlock();
    }
  }

  /** Flips bits of one byte of a stored file in place (bit rot), synced: for corruption tests. */
  public static void damage(Storage storage, String path, long offset) throws IOException {
    byte[] all;
    try (ReadableFile r = storage.open(path)) {
      all = r.readFully(0, (int) r.size());
    }
    all[(int) offset] ^= 0x10;
    try (WritableFile w = storage.create(path)) {
      w.append(all);
      w.sync();
    }
  }

  @Override
  public WritableFile create(String path) throws IOException {
    return live(() -> {
      Faulty f = new Faulty(delegate.create(path));
      syncedAndWritten.put(path, new long[] {0, 0, -1});
      open.add(f);
      return f;
    });
  }

  @Override
  public void createDirectories(String dir) throws IOException {
    live(() -> {
      delegate.createDirectories(dir);
      return null;
    });
  }

  @Override
  public boolean canOverwrite() {
    return delegate.canOverwrite();
  }

  /**
   * Writing in place, with the same faults. A crash tears what was written since the last
   * sync as for a created file, and restores the file's old bytes (assumed zeros, which is
   * all the commit log writes over) where the new ones did not reach the disk.
   */
  @Override
  public WritableFile overwrite(String path, long from) throws IOException {
    return live(() -> {
      long length = delegate.size(path);
      Faulty f = new Faulty(delegate.overwrite(path, from));
      syncedAndWritten.put(path, new long[] {from, from, length});
      open.add(f);
      return f;
    });
  }

  @Override
  public ReadableFile open(String path) throws IOException {
    return live(() -> delegate.open(path));
  }

  @Override
  public boolean exists(String path) {
    return delegate.exists(path);
  }

  @Override
  public long size(String path) throws IOException {
    return delegate.size(path);
  }

  @Override
  public long modifiedMillis(String path) throws IOException {
    return delegate.modifiedMillis(path);
  }

  @Override
  public List<String> list(String dir) throws IOException {
    return live(() -> delegate.list(dir));
  }

  @Override
  public void delete(String path) throws IOException {
    live(() -> {
      if (failDeletes) {
        throw new IOException("injected failure to delete " + path);
      }
      syncedAndWritten.remove(path);
      delegate.delete(path);
      return null;
    });
  }

  @Override
  public void rename(String from, String to) throws IOException {
    live(() -> {
      long[] state = syncedAndWritten.remove(from);
      delegate.rename(from, to);
      if (state != null) {
        syncedAndWritten.put(to, state);
      }
      return null;
    });
  }

  @Override
  public void syncDirectory(String dir) throws IOException {
    live(() -> {
      if (failSyncs.get()) {
        throw new IOException("injected fsync failure on directory " + dir);
      }
      delegate.syncDirectory(dir);
      return null;
    });
  }

  private final class Faulty implements WritableFile {
    private final WritableFile w;

    Faulty(WritableFile w) {
      this.w = w;
    }


    @Override
    public String path() {
      return w.path();
    }

    @Override
    public void append(byte[] b, int off, int len) throws IOException {
      live(() -> {
        doAppend(b, off, len);
        return null;
      });
    }

    private void doAppend(byte[] b, int off, int len) throws IOException {
      long left = spaceLeft.getAndAdd(-len);
      if (left < len) {
        int partial = (int) Math.max(0, left);
        spaceLeft.set(0);
        w.append(b, off, partial);
        track();
        throw new IOException("No space left on device (injected) writing " + w.path());
      }
      w.append(b, off, len);
      track();
    }

    private void track() {
      long[] s = syncedAndWritten.get(w.path());
      if (s != null) {
        s[1] = w.position();
      }
    }

    @Override
    public long position() {
      return w.position();
    }

    @Override
    public void flush() throws IOException {
      live(() -> {
        w.flush();
        return null;
      });
    }

    @Override
    public void sync() throws IOException {
      while (stallSyncs.get() && !dead) {
        try {
          Thread.sleep(1);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw new IOException("interrupted while a sync was stalled", e);
        }
      }
      live(() -> {
        if (failSyncs.get()) {
          throw new IOException("injected fsync failure on " + w.path());
        }
        w.sync();
        long[] s = syncedAndWritten.get(w.path());
        if (s != null) {
          s[0] = w.position();
        }
        return null;
      });
    }

    @Override
    public void truncate(long size) throws IOException {
      live(() -> {
        w.truncate(size);
        long[] s = syncedAndWritten.get(w.path());
        if (s != null) {
          s[0] = Math.min(s[0], size);
          s[1] = size;
          s[2] = -1; // a cut file has no old bytes past its end
        }
        return null;
      });
    }

    @Override
    public void close() throws IOException {
      open.remove(this);
      w.close();
    }
  }
}
