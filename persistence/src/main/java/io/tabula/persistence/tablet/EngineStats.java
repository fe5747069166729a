package io.tabula.persistence.tablet;

import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.atomic.LongAdder;

/**
 * What a node's tablets have done in the background since the node started: flushes (a
 * frozen memtable written as SSTables), merging compactions of some of a group's files, and
 * major compactions (all of them, tombstones dropped), each with the bytes of the files
 * written and the time taken. Monotonic totals, for a metrics library to read when it is
 * scraped; the engine itself never reads them. Thread-safe: the node's flush and merge
 * threads add, any thread reads.
 */
public final class EngineStats {
  /** A kind of background work. */
  public enum Work {
    FLUSH,
    MERGE,
    MAJOR_COMPACTION
  }

  /** Totals of one kind of work: how many ran to the end, the bytes they wrote, their time. */
  public record Totals(long count, long bytesWritten, long nanos) {}

  private record Adders(LongAdder count, LongAdder bytes, LongAdder nanos) {}

  private final Map<Work, Adders> totals = new EnumMap<>(Work.class);

  public EngineStats() {
    for (Work w : Work.values()) {
      totals.put(w, new Adders(new LongAdder(), new LongAdder(), new LongAdder()));
    }
  }

  /** Counts one finished piece of work that wrote {@code bytes} in {@code nanos}. */
  void record(Work work, long bytes, long nanos) {
    Adders a = totals.get(work);
    a.count.increment();
    a.bytes.add(bytes);
    a.nanos.add(nanos);
  }

  /** The totals of {@code work} so far. */
  public Totals totals(Work work) {
    Adders a = totals.get(work);
    return new Totals(a.count.sum(), a.bytes.sum(), a.nanos.sum());
  }
}
