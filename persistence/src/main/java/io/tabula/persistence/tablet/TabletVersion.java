package io.tabula.persistence.tablet;

import io.tabula.persistence.memtable.Memtable;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * An immutable picture of a tablet's data: the active memtable, the frozen memtables
 * waiting to be flushed (newest first), and the SSTables of each locality group (newest
 * first). Readers pin a version for as long as they read, so compactions can replace
 * files underneath them (LevelDB's {@code Version}).
 *
 * <p>Invariants: (1) the tablet's current version holds one reference, each reader one
 * more; (2) a version retains each of its handles once and releases them when its own
 * count falls to zero; (3) {@link #tryRetain} never revives a dead version. Thread-safe.
 */
final class TabletVersion {
  /**
   * A frozen memtable and the redo point it completes (every write up to it is inside), and
   * the highest sequence assigned when it was frozen: no entry inside is higher, and it is
   * final once every write up to that one has finished.
   */
  record Frozen(Memtable memtable, long redoPoint, long maxAssigned) {}

  final Memtable active;
  final List<Frozen> frozen;
  final Map<String, List<SSTableHandle>> files;
  private final AtomicInteger refs = new AtomicInteger(1);

  TabletVersion(Memtable active, List<Frozen> frozen, Map<String, List<SSTableHandle>> files) {
    this.active = active;
    this.frozen = List.copyOf(frozen);
    this.files = Map.copyOf(files);
    this.files.values().forEach(l -> l.forEach(SSTableHandle::retain));
  }

  boolean tryRetain() {
    while (true) {
      int n = refs.get();
      if (n == 0) {
        return false;
      }
      if (refs.compareAndSet(n, n + 1)) {
        return true;
      }
    }
  }

  void release() {
    if (refs.decrementAndGet() == 0) {
      files.values().forEach(l -> l.forEach(SSTableHandle::release));
    }
  }

  List<SSTableHandle> files(String group) {
    return files.getOrDefault(group, List.of());
  }

  long sstableCount() {
    return files.values().stream().mapToLong(List::size).sum();
  }
}
