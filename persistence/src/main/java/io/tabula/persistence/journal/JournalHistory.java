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
 * MasterJournal} guards it.
 */
final class JournalHistory {
  private final Map<String, Id> ids = new HashMap<>();

  private static final class Id {
    final TreeMap<Long, Event> events = new TreeMap<>();
    final List<Snapshot> snapshots = new ArrayList<>();
    long highest;
    long deletedTo;
  }

  private Id id(String persistenceId) {
    return ids.computeIfAbsent(persistenceId, k -> new Id());
  }

  /** Applies {@code r}, the next record in journal order. */
  void apply(JournalRecord r) {
    Id id = id(r.persistenceId());
    if (r instanceof Event e) {
      id.highest = Math.max(id.highest, e.sequenceNr());
      if (e.sequenceNr() > id.deletedTo) {
        id.events.put(e.sequenceNr(), e);
      }
    } else if (r instanceof Snapshot s) {
      id.highest = Math.max(id.highest, s.sequenceNr());
      id.snapshots.add(s);
    } else if (r instanceof DeleteEvents d) {
      deleteEventsTo(id, d.toSequenceNr());
    } else {
      id.snapshots.removeIf(((DeleteSnapshots) r)::deletes);
    }
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
    }
  }

  /** Whether {@code r} still means something: a live event or snapshot, or a deletion of a live snapshot. */
  boolean live(JournalRecord r) {
    Id id = ids.get(r.persistenceId());
    if (id == null) {
      return false;
    }
    if (r instanceof Event e) {
      return id.events.get(e.sequenceNr()) == e;
    }
    if (r instanceof Snapshot s) {
      return id.snapshots.stream().anyMatch(x -> x == s);
    }
    // Deletions: of events, summarised by deletedTo; of snapshots, what they deleted is gone.
    return false;
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
