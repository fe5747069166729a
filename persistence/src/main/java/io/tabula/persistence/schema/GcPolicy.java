package io.tabula.persistence.schema;

import java.util.List;

/**
 * A column family's garbage-collection rule (paper §4 "Timestamps"; Cloud Bigtable GC
 * rules). Applied on every read, so a collectable cell is never returned, and in every
 * compaction, which drops collectable cells for good.
 *
 * <p>{@link #collect} sees one visible version of a column: its rank among the visible
 * versions of that column (0 = newest), its timestamp and the current time, all in
 * microseconds.
 */
public sealed interface GcPolicy {
  boolean collect(int rank, long timestampMicros, long nowMicros);

  /** Keeps everything. */
  GcPolicy KEEP_ALL = new KeepAll();

  static GcPolicy maxVersions(int n) {
    return new MaxVersions(n);
  }

  static GcPolicy maxAgeMicros(long micros) {
    return new MaxAge(micros);
  }

  static GcPolicy union(GcPolicy... rules) {
    return new Union(List.of(rules));
  }

  static GcPolicy intersection(GcPolicy... rules) {
    return new Intersection(List.of(rules));
  }

  record KeepAll() implements GcPolicy {
    @Override
    public boolean collect(int rank, long ts, long now) {
      return false;
    }
  }

  /** Keeps the newest {@code n} versions of each column. */
  record MaxVersions(int n) implements GcPolicy {
    public MaxVersions {
      if (n < 1) {
        throw new IllegalArgumentException("max_num_versions must be >= 1, was " + n);
      }
    }

    @Override
    public boolean collect(int rank, long ts, long now) {
      return rank >= n;
    }
  }

  /** Keeps versions whose timestamp is younger than {@code micros} before now. */
  record MaxAge(long micros) implements GcPolicy {
    public MaxAge {
      if (micros <= 0) {
        throw new IllegalArgumentException("max_age must be positive, was " + micros + " µs");
      }
    }

    @Override
    public boolean collect(int rank, long ts, long now) {
      return ts < now - micros;
    }
  }

  /** Collects what any of its rules collects. */
  record Union(List<GcPolicy> rules) implements GcPolicy {
    public Union {
      rules = List.copyOf(rules);
    }

    @Override
    public boolean collect(int rank, long ts, long now) {
      for (GcPolicy r : rules) {
        if (r.collect(rank, ts, now)) {
          return true;
        }
      }
      return false;
    }
  }

  /** Collects what every one of its rules collects. */
  record Intersection(List<GcPolicy> rules) implements GcPolicy {
    public Intersection {
      rules = List.copyOf(rules);
      if (rules.isEmpty()) {
        throw new IllegalArgumentException("an intersection GC rule needs at least one rule");
      }
    }

    @Override
    public boolean collect(int rank, long ts, long now) {
      for (GcPolicy r : rules) {
        if (!r.collect(rank, ts, now)) {
          return false;
        }
      }
      return true;
    }
  }
}
