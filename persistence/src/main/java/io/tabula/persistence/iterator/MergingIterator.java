package io.tabula.persistence.iterator;

import io.tabula.persistence.model.CellKey;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.PriorityQueue;

/**
 * Merges several {@link CellIterator}s into one in {@link CellKey#ORDER} (paper §5.3: a read
 * sees the merge of the memtables and the SSTables). Equal keys from several children come out
 * once, from the child listed first (the newest source): a key holds its write's sequence, so
 * two equal keys are one write, replayed from the commit log after a crash into a memtable
 * while an SSTable flushed before the crash holds it too (a flush does not move the redo point
 * past writes still in flight, nor during a replay). An operand of an aggregate cell must not
 * be folded twice.
 *
 * <p>Owns its children: {@link #close()} closes them. Not thread-safe.
 */
public final class MergingIterator implements CellIterator {
  private final List<CellIterator> children;
  private final PriorityQueue<Integer> heap;
  private int current = -1;

  public MergingIterator(List<? extends CellIterator> children) {
    this.children = new ArrayList<>(children);
    this.heap = new PriorityQueue<>(Math.max(1, children.size()), (a, b) -> {
      int c = CellKey.compare(this.children.get(a).key(), this.children.get(b).key());
      return c != 0 ? c : Integer.compare(a, b);
    });
  }

  @Override
  public void seek(CellKey target) throws IOException {
    heap.clear();
    for (int i = 0; i < children.size(); i++) {
      children.get(i).seek(target);
      if (children.get(i).valid()) {
        heap.add(i);
      }
    }
    current = heap.isEmpty() ? -1 : heap.poll();
  }

  @Override
  public void seekToFirst() throws IOException {
    heap.clear();
    for (int i = 0; i < children.size(); i++) {
      children.get(i).seekToFirst();
      if (children.get(i).valid()) {
        heap.add(i);
      }
    }
    current = heap.isEmpty() ? -1 : heap.poll();
  }

  @Override
  public boolean valid() {
    return current >= 0;
  }

  @Override
  public void next() throws IOException {
    CellKey was = key();
    // One child never yields a key twice: an equal key can only come from another, taken from the heap.
    while (advance() && CellKey.compare(children.get(current).key(), was) == 0) {
      // the same write from an older source: passed over
    }
  }

  /** Moves to the next entry; whether it came from another child (taken from the heap). */
  private boolean advance() throws IOException {
    CellIterator c = children.get(current);
    c.next();
    if (c.valid()) {
      if (heap.isEmpty() || compareTo(current, heap.peek()) < 0) {
        return false;
      }
      heap.add(current);
    }
    current = heap.isEmpty() ? -1 : heap.poll();
    return current >= 0;
  }

  private int compareTo(int a, int b) {
    int c = CellKey.compare(children.get(a).key(), children.get(b).key());
    return c != 0 ? c : Integer.compare(a, b);
  }

  @Override
  public CellKey key() {
    return children.get(current).key();
  }

  @Override
  public byte[] value() {
    return children.get(current).value();
  }

  @Override
  public void close() throws IOException {
    IOException first = null;
    for (CellIterator c : children) {
      try {
        c.close();
      } catch (IOException e) {
        if (first == null) {
          first = e;
        } else {
          first.addSuppressed(e);
        }
      }
    }
    if (first != null) {
      throw first;
    }
  }
}
