package io.tabula.persistence.wal;

import com.google.errorprone.annotations.concurrent.GuardedBy;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.ToLongFunction;

/**
 * The commit log's ledger of sealed segments: each segment on disk that nothing writes to any
 * more (old ones from earlier processes, rolled ones, blank ones left by the preparer), with the
 * highest sequence of each tablet in it, and which of them no tablet needs any more.
 *
 * <p>Invariants: (1) an old segment's summary is unknown (null) until replay read it, and a
 * segment whose summary is unknown is never chosen; (2) a segment is chosen at most once,
 * however many callers choose at once; (3) a blank segment has an empty summary, so it goes
 * with the first choice.
 *
 * <p>Thread-safe: one lock of its own, held only inside this class, and never while calling
 * out (the caller's {@code durableUpTo} is asked outside it). The log's writer adds rolled
 * segments, its preparer adds blank ones, a replay adds what it read, and the node's flushes
 * choose.
 */
final class SealedSegments {
  private final Object lock = new Object();
  /** Sealed segments by path (in name order: segment numbers), each with its tablets' highest sequences, or null. */
  @GuardedBy("lock")
  private final Map<String, Map<String, Long>> segments = new TreeMap<>();

  /** A ledger of the segments a log found in its folder when it opened, their summaries unknown. */
  SealedSegments(List<String> old) {
    synchronized (lock) {
      old.forEach(s -> segments.put(s, null));
    }
  }

  /** Segment {@code path} is sealed, holding up to {@code maxSequence} of each tablet (a copy is kept). */
  void sealed(String path, Map<String, Long> maxSequence) {
    Map<String, Long> copy = Map.copyOf(maxSequence);
    synchronized (lock) {
      segments.put(path, copy);
    }
  }

  /** A blank segment left in the folder: it holds no record, so it goes with the next obsolete segments. */
  void leftBlank(String path) {
    sealed(path, Map.of());
  }

  /**
   * Takes out of the ledger, and returns, the sealed segments none of whose records is
   * needed: for every tablet in the segment, its highest sequence there is at or below {@code
   * durableUpTo} of that tablet. The caller deletes them.
   */
  List<String> takeObsolete(ToLongFunction<String> durableUpTo) {
    Map<String, Map<String, Long>> known = new TreeMap<>();
    synchronized (lock) {
      segments.forEach((path, max) -> {
        if (max != null) {
          known.put(path, max);
        }
      });
    }
    List<String> obsolete = new ArrayList<>();
    known.forEach((path, max) -> {
      if (max.entrySet().stream().allMatch(t -> t.getValue() <= durableUpTo.applyAsLong(t.getKey()))) {
        obsolete.add(path);
      }
    });
    List<String> taken = new ArrayList<>(obsolete.size());
    synchronized (lock) {
      for (String path : obsolete) {
        if (segments.remove(path, known.get(path))) { // else another caller took it meanwhile
          taken.add(path);
        }
      }
    }
    return taken;
  }

  /** The paths of the sealed segments, in order. */
  List<String> paths() {
    synchronized (lock) {
      return new ArrayList<>(segments.keySet());
    }
  }
}
