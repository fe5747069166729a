package io.tabula.persistence.journal;

import io.tabula.persistence.journal.JournalRecord.DeleteEvents;
import io.tabula.persistence.journal.JournalRecord.DeleteSnapshots;
import io.tabula.persistence.journal.JournalRecord.Event;
import io.tabula.persistence.journal.JournalRecord.Snapshot;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/**
 * What the master's journal holds, per persistence id: its live events (not deleted) by
 * sequence number, its live snapshots, the highest sequence number it ever stored and how far
 * its events are deleted. Built by applying records in journal order. Not thread-safe: {@link
 * MasterJournal} guards it; while an open builds it ({@link JournalRead}), only the opening
 * thread holds it.
 */
final class JournalHistory {
  private final Map<String, Id> ids = new HashMap<>();

  private static final class Id {
    final TreeMap<Long, Event> events = new TreeMap<>();
    /** The index of the segment each live event was read from, by sequence number ({@link #NOT_READ}: appended). */
    final TreeMap<Long, Integer> eventSegments = new TreeMap<>();
    final List<Snapshot> snapshots = new ArrayList<>();
    /** The index of the segment each live snapshot was read from, in the order of {@link #snapshots}. */
    final List<Integer> snapshotSegments = new ArrayList<>();
    long highest;
    long deletedTo;
  }

  /** The segment index of a record appended by this master rather than read at its open. */
  static final int NOT_READ = -1;

  private Id id(String persistenceId) {
    return ids.computeIfAbsent(persistenceId, k -> new Id());
  }

  /** Applies {@code r}, the next record in journal order, appended by this master. */
  void apply(JournalRecord r) {
    apply(r, NOT_READ);
  }

  /** Applies {@code r}, the next record in journal order, read from segment {@code segment} of an open. */
  void apply(JournalRecord r, int segment) {
    Id id = id(r.persistenceId());
    if (r instanceof Event e) {
      id.highest = Math.max(id.highest, e.sequenceNr());
      if (e.sequenceNr() > id.deletedTo) {
        id.events.put(e.sequenceNr(), e);
        id.eventSegments.put(e.sequenceNr(), segment);
      }
    } else if (r instanceof Snapshot s) {
      id.highest = Math.max(id.highest, s.sequenceNr());
      id.snapshots.add(s);
      id.snapshotSegments.add(segment);
    } else if (r instanceof DeleteEvents d) {
      deleteEventsTo(id, d.toSequenceNr());
    } else {
      DeleteSnapshots d = (DeleteSnapshots) r;
      for (int i = id.snapshots.size() - 1; i >= 0; i--) {
        if (d.deletes(id.snapshots.get(i))) {
          id.snapshots.remove(i);
          id.snapshotSegments.remove(i);
        }
      }
    }
  }

  /** The segments (by index, as given to {@link #apply(JournalRecord, int)}) that hold a live event or snapshot. */
  java.util.Set<Integer> liveSegments() {
    java.util.Set<Integer> out = new java.util.HashSet<>();
    for (Id id : ids.values()) {
      out.addAll(id.eventSegments.values());
      out.addAll(id.snapshotSegments);
    }
    out.remove(NOT_READ);
    return out;
  }

  /** Carries over what a horizon summarised of records no longer stored. */
  void summary(String persistenceId, long highest, long deletedTo) {
    Id id = id(persistenceId);
    id.highest = Math.max(id.highest, highest);
    deleteEventsTo(id, deletedTo);
  }

  private static void deleteEventsTo(Id id, long to) {
    if (to > id.deletedTo) {
      id.deletedTo = to;
      id.events.headMap(to, true).clear();
      id.eventSegments.headMap(to, true).clear();
    }
  }

  /** The persistence ids with anything recorded. */
  Iterable<String> persistenceIds() {
    return ids.keySet();
  }

  long highestSequenceNr(String persistenceId) {
    Id id = ids.get(persistenceId);
    return id == null ? 0 : Math.max(id.highest, id.deletedTo);
  }

  long deletedTo(String persistenceId) {
    Id id = ids.get(persistenceId);
    return id == null ? 0 : id.deletedTo;
  }

  /** Live events of {@code persistenceId} from {@code from} to {@code to} (inclusive), at most {@code max}. */
  List<Event> events(String persistenceId, long from, long to, long max) {
    Id id = ids.get(persistenceId);
    List<Event> out = new ArrayList<>();
    if (id == null || from > to) {
      return out;
    }
    for (Event e : id.events.subMap(from, true, to, true).values()) {
      if (out.size() >= max) {
        break;
      }
      out.add(e);
    }
    return out;
  }

  /** The live snapshot with the highest sequence number (then the latest) within the bounds, if any. */
  Optional<Snapshot> latestSnapshot(String persistenceId, long minSequenceNr, long maxSequenceNr,
      long minTimestamp, long maxTimestamp) {
    Id id = ids.get(persistenceId);
    if (id == null) {
      return Optional.empty();
    }
    Snapshot best = null;
    for (Snapshot s : id.snapshots) {
      boolean within = s.sequenceNr() >= minSequenceNr && s.sequenceNr() <= maxSequenceNr
          && s.timestamp() >= minTimestamp && s.timestamp() <= maxTimestamp;
      if (within && (best == null || s.sequenceNr() > best.sequenceNr()
          || (s.sequenceNr() == best.sequenceNr() && s.timestamp() >= best.timestamp()))) {
        best = s;
      }
    }
    return Optional.ofNullable(best);
  }
}
