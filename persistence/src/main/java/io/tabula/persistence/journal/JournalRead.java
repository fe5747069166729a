package io.tabula.persistence.journal;

import static io.tabula.persistence.journal.MasterJournal.HORIZON;
import static io.tabula.persistence.journal.MasterJournal.MAX_RECORD;
import static io.tabula.persistence.journal.MasterJournal.RECORD_HEADER;
import static io.tabula.persistence.journal.MasterJournal.SEGMENT_HEADER;
import static io.tabula.persistence.journal.MasterJournal.SEGMENT_MAGIC;
import static io.tabula.persistence.journal.MasterJournal.VERSION;
import static io.tabula.persistence.journal.MasterJournal.crc;
import static io.tabula.persistence.journal.MasterJournal.epochDir;
import static io.tabula.persistence.journal.MasterJournal.segments;

import io.tabula.persistence.encoding.ByteArrays;
import io.tabula.persistence.encoding.ByteSink;
import io.tabula.persistence.journal.JournalRecord.DeleteSnapshots;
import io.tabula.persistence.journal.JournalRecord.Snapshot;
import io.tabula.persistence.storage.CorruptionException;
import io.tabula.persistence.storage.ReadableFile;
import io.tabula.persistence.storage.Storage;
import java.io.IOException;
import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

/**
 * The reading done when the master's journal {@linkplain MasterJournal#open opens}: the history
 * before the new epoch (the newest older horizon's summary and files, then that epoch's own
 * segments), applied to a {@link JournalHistory}, and which of the segments read the new
 * horizon keeps. The format is docs/formats/master-journal.md.
 *
 * <p>Holds no state. Used by one thread, the one opening the journal, during the open: the
 * {@link JournalHistory} it fills is that thread's alone until the {@link MasterJournal} opened
 * takes it over, from then on guarded by that journal's lock.
 */
final class JournalRead {
  private JournalRead() {}

  /**
   * A segment as an open read it: its path, the length of its whole records, how many records
   * it holds, and of those only what deciding whether to keep it needs (its snapshots without
   * their payloads, its snapshot deletions). Its records themselves went into the history as
   * they were read: one whose later records delete it is not held at all, so an open holds
   * the live history, not every segment a long-running master wrote (each of its snapshots
   * the size of the whole directory).
   */
  record Segment(String path, long length, int records, List<Snapshot> snapshots,
      List<DeleteSnapshots> snapshotDeletions) {}

  /** What an open read: the segments in order (the history was given their records). */
  record History(List<Segment> segments) {}

  /**
   * The history before this epoch, applied to {@code history} record by record: the summary
   * and files the newest older horizon lists, to their listed lengths, then that epoch's own
   * segments to their last whole record. Epochs after it without a horizon never wrote (a
   * segment is made only after the horizon). Each record is tagged with its segment's index.
   */
  static History readHistory(Storage storage, String dir, List<Long> older, JournalHistory history)
      throws IOException {
    List<Segment> out = new ArrayList<>();
    for (int i = older.size() - 1; i >= 0; i--) {
      String horizonPath = Storage.path(epochDir(dir, older.get(i)), HORIZON);
      if (!storage.exists(horizonPath)) {
        continue;
      }
      Horizon h = Horizon.read(storage, horizonPath);
      h.summary().forEach((id, v) -> history.summary(id, v[0], v[1]));
      for (Horizon.File f : h.files()) {
        out.add(readSegment(storage, Storage.path(dir, f.path()), f.length(), history, out.size()));
      }
      List<String> own = segments(storage, epochDir(dir, older.get(i)));
      for (int s = 0; s < own.size(); s++) {
        Segment read = readLive(storage, own.get(s), Long.MAX_VALUE, history, out.size());
        if (read.length < storage.size(own.get(s)) && s < own.size() - 1) {
          throw new CorruptionException(own.get(s), read.length, "damaged record in a segment that is not the last");
        }
        out.add(read);
      }
      return new History(out);
    }
    return new History(out);
  }

  /** Reads a segment exactly to {@code length}, which must end a whole record, into {@code history}. */
  private static Segment readSegment(Storage storage, String path, long length, JournalHistory history, int index)
      throws IOException {
    if (!storage.exists(path)) {
      throw new CorruptionException(path, 0, "a segment the journal's horizon lists is missing");
    }
    if (length < SEGMENT_HEADER) {
      // read before its header was whole: nothing of it is in the history
      return new Segment(path, length, 0, List.of(), List.of());
    }
    Segment s = readLive(storage, path, length, history, index);
    if (s.length != length) {
      throw new CorruptionException(path, s.length, "the horizon lists " + length + " bytes, whole records end here");
    }
    return s;
  }

  /**
   * Reads a segment's whole records within its first {@code limit} bytes (a torn or damaged
   * tail ends it) into {@code history}, tagged with the segment's {@code index}.
   */
  private static Segment readLive(Storage storage, String path, long limit, JournalHistory history, int index)
      throws IOException {
    int records = 0;
    List<Snapshot> snapshots = new ArrayList<>();
    List<DeleteSnapshots> snapshotDeletions = new ArrayList<>();
    try (ReadableFile f = storage.open(path)) {
      long size = Math.min(f.size(), limit);
      if (size < SEGMENT_HEADER) {
        return new Segment(path, 0, 0, snapshots, snapshotDeletions); // made, its header not yet whole
      }
      byte[] header = new byte[SEGMENT_HEADER];
      f.readFully(0, header, 0, header.length);
      checkHeader(path, header);
      long at = SEGMENT_HEADER;
      byte[] head = new byte[RECORD_HEADER];
      while (at + RECORD_HEADER <= size) {
        f.readFully(at, head, 0, head.length);
        int length = ByteSink.getIntAt(head, 0);
        if (length <= 0 || length > MAX_RECORD || at + RECORD_HEADER + length > size) {
          break;
        }
        byte[] body = new byte[length];
        f.readFully(at + RECORD_HEADER, body, 0, length);
        if (ByteSink.getIntAt(head, 4) != crc(head, 0, 4, body)) {
          break;
        }
        JournalRecord r;
        try {
          r = JournalRecord.decode(ByteBuffer.wrap(body));
        } catch (IllegalArgumentException | BufferUnderflowException e) {
          throw new CorruptionException(path, at, "a record whose checksum holds does not parse: " + e);
        }
        history.apply(r, index);
        records++;
        if (r instanceof Snapshot x) {
          snapshots.add(new Snapshot(x.persistenceId(), x.sequenceNr(), x.timestamp(), x.serializerId(), x.manifest(),
              ByteArrays.EMPTY));
        } else if (r instanceof DeleteSnapshots d) {
          snapshotDeletions.add(d);
        }
        at += RECORD_HEADER + length;
      }
      return new Segment(path, at, records, snapshots, snapshotDeletions);
    }
  }


  private static void checkHeader(String path, byte[] h) throws CorruptionException {
    if (ByteSink.getLongAt(h, 0) != SEGMENT_MAGIC) {
      throw new CorruptionException(path, 0, "not a master journal segment (bad magic)");
    }
    if (ByteSink.getIntAt(h, SEGMENT_HEADER - 4) != crc(h, 0, SEGMENT_HEADER - 4, ByteArrays.EMPTY)) {
      throw new CorruptionException(path, 0, "segment header checksum mismatch");
    }
    if (ByteSink.getIntAt(h, 8) != VERSION) {
      throw new CorruptionException(path, 8, "unknown segment version " + ByteSink.getIntAt(h, 8));
    }
  }

  /** Which segments the next horizon keeps: the last, and any with a record that still means something. */
  static boolean[] keep(List<Segment> read, JournalHistory history) {
    boolean[] keep = new boolean[read.size()];
    history.liveSegments().forEach(i -> keep[i] = true);
    if (read.size() > 0) {
      keep[read.size() - 1] = true;
    }
    // A snapshot deletion must stay while a segment kept holds a snapshot it deleted.
    boolean changed = true;
    while (changed) {
      changed = false;
      for (int i = 0; i < read.size(); i++) {
        if (keep[i]) {
          continue;
        }
        for (DeleteSnapshots d : read.get(i).snapshotDeletions()) {
          if (deletesKept(d, read, keep, i)) {
            keep[i] = true;
            changed = true;
            break;
          }
        }
      }
    }
    return keep;
  }

  private static boolean deletesKept(DeleteSnapshots d, List<Segment> read, boolean[] keep, int before) {
    for (int j = 0; j < before; j++) {
      if (keep[j] && read.get(j).snapshots().stream().anyMatch(d::deletes)) {
        return true;
      }
    }
    return false;
  }
}
