package io.tabula.persistence.journal;

import io.tabula.persistence.encoding.ByteSink;
import java.nio.ByteBuffer;
import java.util.Arrays;

/**
 * One record of the master's journal ({@link MasterJournal}; docs/formats/master-journal.md):
 * an event, a snapshot, or a deletion of either. Payloads are opaque bytes with the serializer
 * id and manifest that made them, so this module needs no Pekko and a record is stored exactly
 * as the writer serialized it.
 */
public sealed interface JournalRecord {
  /** The persistent actor the record belongs to. */
  String persistenceId();

  /** Type codes, stored: never renumber or reuse. */
  int TYPE_EVENT = 1;
  int TYPE_SNAPSHOT = 2;
  int TYPE_DELETE_EVENTS = 3;
  int TYPE_DELETE_SNAPSHOTS = 4;

  /** Event {@code sequenceNr} of {@code persistenceId}. */
  record Event(String persistenceId, long sequenceNr, String writerUuid, long timestamp, String adapterManifest,
      int serializerId, String manifest, byte[] payload) implements JournalRecord {
    @Override
    public boolean equals(Object o) {
      return o instanceof Event e && persistenceId.equals(e.persistenceId) && sequenceNr == e.sequenceNr
          && writerUuid.equals(e.writerUuid) && timestamp == e.timestamp && adapterManifest.equals(e.adapterManifest)
          && serializerId == e.serializerId && manifest.equals(e.manifest) && Arrays.equals(payload, e.payload);
    }

    @Override
    public int hashCode() {
      return persistenceId.hashCode() * 31 + Long.hashCode(sequenceNr);
    }
  }

  /** A snapshot of {@code persistenceId}'s state after event {@code sequenceNr}. */
  record Snapshot(String persistenceId, long sequenceNr, long timestamp, int serializerId, String manifest,
      byte[] payload) implements JournalRecord {
    @Override
    public boolean equals(Object o) {
      return o instanceof Snapshot s && persistenceId.equals(s.persistenceId) && sequenceNr == s.sequenceNr
          && timestamp == s.timestamp && serializerId == s.serializerId && manifest.equals(s.manifest)
          && Arrays.equals(payload, s.payload);
    }

    @Override
    public int hashCode() {
      return persistenceId.hashCode() * 31 + Long.hashCode(sequenceNr);
    }
  }

  /** Events up to and including {@code toSequenceNr} are deleted. */
  record DeleteEvents(String persistenceId, long toSequenceNr) implements JournalRecord {}

  /** Snapshots with a sequence number and a timestamp within these bounds (inclusive) are deleted. */
  record DeleteSnapshots(String persistenceId, long minSequenceNr, long maxSequenceNr, long minTimestamp,
      long maxTimestamp) implements JournalRecord {
    /** Whether this deletes {@code s}. */
    public boolean deletes(Snapshot s) {
      return s.persistenceId().equals(persistenceId) && s.sequenceNr() >= minSequenceNr
          && s.sequenceNr() <= maxSequenceNr && s.timestamp() >= minTimestamp && s.timestamp() <= maxTimestamp;
    }
  }

  /** The record's body: {@code u8 type | fields}, as the format doc gives them. */
  static void encode(JournalRecord r, ByteSink out) {
    if (r instanceof Event e) {
      out.putByte(TYPE_EVENT).putString(e.persistenceId()).putLong(e.sequenceNr()).putString(e.writerUuid())
          .putLong(e.timestamp()).putString(e.adapterManifest()).putInt(e.serializerId()).putString(e.manifest())
          .putLengthPrefixed(e.payload());
    } else if (r instanceof Snapshot s) {
      out.putByte(TYPE_SNAPSHOT).putString(s.persistenceId()).putLong(s.sequenceNr()).putLong(s.timestamp())
          .putInt(s.serializerId()).putString(s.manifest()).putLengthPrefixed(s.payload());
    } else if (r instanceof DeleteEvents d) {
      out.putByte(TYPE_DELETE_EVENTS).putString(d.persistenceId()).putLong(d.toSequenceNr());
    } else {
      DeleteSnapshots d = (DeleteSnapshots) r;
      out.putByte(TYPE_DELETE_SNAPSHOTS).putString(d.persistenceId()).putLong(d.minSequenceNr())
          .putLong(d.maxSequenceNr()).putLong(d.minTimestamp()).putLong(d.maxTimestamp());
    }
  }

  /**
   * Reads a body written by {@link #encode}.
   *
   * @throws IllegalArgumentException if it is not one (unknown type, fields past the end, bytes left over)
   */
  static JournalRecord decode(ByteBuffer in) {
    int type = in.get() & 0xFF;
    JournalRecord r = switch (type) {
      case TYPE_EVENT -> new Event(ByteSink.readString(in), in.getLong(), ByteSink.readString(in), in.getLong(),
          ByteSink.readString(in), in.getInt(), ByteSink.readString(in), ByteSink.readBytes(in));
      case TYPE_SNAPSHOT -> new Snapshot(ByteSink.readString(in), in.getLong(), in.getLong(), in.getInt(),
          ByteSink.readString(in), ByteSink.readBytes(in));
      case TYPE_DELETE_EVENTS -> new DeleteEvents(ByteSink.readString(in), in.getLong());
      case TYPE_DELETE_SNAPSHOTS -> new DeleteSnapshots(ByteSink.readString(in), in.getLong(), in.getLong(),
          in.getLong(), in.getLong());
      default -> throw new IllegalArgumentException("unknown record type " + type);
    };
    if (in.hasRemaining()) {
      throw new IllegalArgumentException(in.remaining() + " bytes after the record's last field");
    }
    return r;
  }
}
