package io.tabula.persistence.changes;

import io.tabula.persistence.encoding.ByteSink;
import io.tabula.persistence.encoding.MutationCodec;
import io.tabula.persistence.storage.CorruptionException;
import io.tabula.persistence.storage.ReadableFile;
import io.tabula.persistence.storage.Storage;
import io.tabula.persistence.storage.WritableFile;
import java.io.IOException;
import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.UUID;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.zip.CRC32C;

/**
 * A tablet's change log on the storage (docs/change-streams.md; layout in
 * docs/formats/change-log.md): the folder {@code changes} beside its manifest, holding one
 * segment per flushed memtable, named by the sequences and the newest commit time inside. A
 * segment is written whole under a temporary name, synced and renamed, before the manifest
 * commit that moves the tablet's redo point past its changes; so every change at or below the
 * redo point is in a segment, and a segment is never seen half written. Two segments may
 * overlap (a flush whose manifest commit failed is written again, larger, after a replay):
 * their common sequences hold the same changes, and readers skip sequences they have passed.
 *
 * <p>A tablet merged into another also holds a marker naming the merged tablet ({@link
 * #writeMerged}), which a reader follows only once that tablet has been opened (the merge's
 * commit); a tablet reopened after an abandoned merge deletes it first. Stateless.
 */
public final class ChangeLog {
  private ChangeLog() {}

  /** The folder's name under a tablet's folder. */
  public static final String FOLDER = "changes";
  /** The merge marker's name. */
  public static final String MERGED = "MERGED";

  static final long MAGIC = 0x54424c4143484731L; // "TBLACHG1"
  static final int VERSION = 1;
  static final int HEADER_BYTES = 12;
  /** Bytes before a record's payload: its length and CRC32C. */
  static final int RECORD_HEADER_BYTES = 8;
  /** The largest payload a record may have: a row mutation of the largest value and more. */
  static final int MAX_PAYLOAD_BYTES = 256 * 1024 * 1024;
  static final String MERGED_MAGIC = "TBLAMRG1";

  private static final Pattern SEGMENT = Pattern.compile("(\\d{20})-(\\d{20})-(\\d{20})\\.chg");
  private static final String TEMP_PREFIX = ".tmp-";

  /** A segment: its path, the first and last sequences inside, and its newest commit time. */
  public record Segment(String path, long first, long last, long maxCommitMicros) {}

  /** The change-log folder of the tablet whose folder is {@code tabletDir}. */
  public static String folder(String tabletDir) {
    return Storage.path(tabletDir, FOLDER);
  }

  /**
   * Writes {@code changes} (in sequence order, not empty) as one segment in {@code folder},
   * durably; a segment of the same name there already holds the same changes, and is kept.
   */
  public static Segment write(Storage storage, String folder, Collection<Change> changes) throws IOException {
    if (changes.isEmpty()) {
      throw new IllegalArgumentException("a segment holds at least one change");
    }
    ByteSink record = new ByteSink(1024);
    long first = -1;
    long last = -1;
    long maxCommit = 0;
    storage.createDirectories(folder);
    String temp = Storage.path(folder, TEMP_PREFIX + UUID.randomUUID());
    try (WritableFile out = storage.create(temp)) {
      ByteBuffer header = ByteBuffer.allocate(HEADER_BYTES).putLong(MAGIC).putInt(VERSION);
      out.append(header.array());
      for (Change c : changes) {
        if (c.sequence() <= last) {
          throw new IllegalArgumentException("changes out of sequence order: " + c.sequence() + " after " + last);
        }
        first = first < 0 ? c.sequence() : first;
        last = c.lastSequence();
        maxCommit = Math.max(maxCommit, c.commitMicros());
        record.reset();
        record.putInt(0).putInt(0).putLong(c.sequence()).putLong(c.commitMicros());
        MutationCodec.encodeTo(c.mutation(), record);
        int len = record.size() - RECORD_HEADER_BYTES;
        CRC32C crc = new CRC32C();
        crc.update(record.array(), RECORD_HEADER_BYTES, len);
        ByteSink.putIntAt(record.array(), 0, len);
        ByteSink.putIntAt(record.array(), 4, (int) crc.getValue());
        out.append(record.array(), 0, record.size());
      }
      out.sync();
    } catch (IOException | RuntimeException e) {
      deleteTemporary(storage, temp, e);
      throw e;
    }
    Segment s = new Segment(Storage.path(folder, String.format("%020d-%020d-%020d.chg", first, last, maxCommit)),
        first, last, maxCommit);
    storage.renameIfAbsent(temp, s.path());
    storage.syncDirectory(folder);
    return s;
  }

  /** The segments in {@code folder}, by first sequence (then last); none if there is no folder. */
  public static List<Segment> segments(Storage storage, String folder) throws IOException {
    List<Segment> out = new ArrayList<>();
    for (String name : storage.list(folder)) {
      Matcher m = SEGMENT.matcher(name);
      if (m.matches()) {
        out.add(new Segment(Storage.path(folder, name), Long.parseLong(m.group(1)), Long.parseLong(m.group(2)),
            Long.parseLong(m.group(3))));
      }
    }
    out.sort((a, b) -> a.first != b.first ? Long.compare(a.first, b.first) : Long.compare(a.last, b.last));
    return out;
  }

  /** Reads a segment's changes one after another. Not thread-safe; close it. */
  public static final class Reader implements AutoCloseable {
    private final ReadableFile file;
    private long position = HEADER_BYTES;

    public Reader(Storage storage, Segment s) throws IOException {
      this(storage, s, HEADER_BYTES);
    }

    /** A reader from byte {@code offset} of the segment, where a record starts (one {@link #position} gave). */
    public Reader(Storage storage, Segment s, long offset) throws IOException {
      this.file = storage.open(s.path());
      this.position = Math.max(HEADER_BYTES, offset);
      try {
        if (file.size() < HEADER_BYTES) {
          throw new CorruptionException(s.path(), 0, "shorter than a change segment's header");
        }
        ByteBuffer h = ByteBuffer.wrap(file.readFully(0, HEADER_BYTES));
        long magic = h.getLong();
        if (magic != MAGIC) {
          throw new CorruptionException(s.path(), 0, String.format("bad magic 0x%016x", magic));
        }
        int version = h.getInt();
        if (version != VERSION) {
          throw new CorruptionException(s.path(), 8, "unknown change segment version " + version);
        }
      } catch (IOException | RuntimeException e) {
        file.close();
        throw e;
      }
    }

    /** Where the next record starts. */
    public long position() {
      return position;
    }

    /** The next change, or null at the end. */
    public Change next() throws IOException {
      if (position == file.size()) {
        return null;
      }
      if (file.size() - position < RECORD_HEADER_BYTES) {
        throw new CorruptionException(file.path(), position, "a record's header is cut short");
      }
      ByteBuffer h = ByteBuffer.wrap(file.readFully(position, RECORD_HEADER_BYTES));
      int len = h.getInt();
      int crc = h.getInt();
      if (len < 16 || len > MAX_PAYLOAD_BYTES || len > file.size() - position - RECORD_HEADER_BYTES) {
        throw new CorruptionException(file.path(), position, "bad record length " + len);
      }
      byte[] payload = file.readFully(position + RECORD_HEADER_BYTES, len);
      CRC32C c = new CRC32C();
      c.update(payload);
      if ((int) c.getValue() != crc) {
        throw new CorruptionException(file.path(), position, "record checksum mismatch");
      }
      long at = position;
      position += RECORD_HEADER_BYTES + len;
      ByteBuffer in = ByteBuffer.wrap(payload);
      try {
        long sequence = in.getLong();
        long commit = in.getLong();
        Change change = new Change(sequence, commit, MutationCodec.decode(in));
        if (in.hasRemaining()) {
          throw new CorruptionException(file.path(), at, in.remaining() + " unexpected bytes after a change");
        }
        return change;
      } catch (BufferUnderflowException | IllegalArgumentException e) {
        throw new CorruptionException(file.path(), at, "malformed change: " + e.getMessage());
      }
    }

    @Override
    public void close() throws IOException {
      file.close();
    }
  }

  /**
   * Where a reader of a change log stands: the segment it reads and the byte where its next
   * record starts; a hint, checked against the segments there now.
   */
  public record Cursor(String segmentPath, long offset) {}

  /** A batch of changes read from the segments, and where the next batch starts. */
  public record Batch(List<Change> changes, Cursor next) {}

  /**
   * The changes after sequence {@code after} in {@code folder}'s segments, in sequence order,
   * about {@code maxBytes} of them (one at least), read from {@code cursor} when it still
   * names a segment that holds the next ones (else from the first segment that does).
   */
  public static Batch readAfter(Storage storage, String folder, long after, long maxBytes, Cursor cursor)
      throws IOException {
    return readAfter(storage, folder, after, maxBytes, cursor, 0);
  }

  /**
   * {@link #readAfter(Storage, String, long, long, Cursor)}, passing over the segments whose
   * changes all committed before {@code fromMicros} (whose changes a reader from that time skips).
   */
  public static Batch readAfter(Storage storage, String folder, long after, long maxBytes, Cursor cursor,
      long fromMicros) throws IOException {
    List<Change> out = new ArrayList<>();
    long bytes = 0;
    long last = after;
    Cursor next = null;
    for (Segment s : segments(storage, folder)) {
      if (s.last() <= last || s.maxCommitMicros() < fromMicros) {
        continue;
      }
      long from = cursor != null && cursor.segmentPath().equals(s.path()) ? cursor.offset() : HEADER_BYTES;
      try (Reader r = new Reader(storage, s, from)) {
        for (Change c = r.next(); c != null; c = r.next()) {
          if (c.sequence() <= last) {
            continue;
          }
          out.add(c);
          last = c.lastSequence();
          bytes += c.approximateBytes();
          next = new Cursor(s.path(), r.position());
          if (bytes >= maxBytes) {
            return new Batch(out, next);
          }
        }
      }
    }
    return new Batch(out, next);
  }

  /**
   * Deletes the segments of {@code folder} whose every change committed before {@code
   * cutoffMicros}; how many it deleted.
   */
  public static int deleteOlder(Storage storage, String folder, long cutoffMicros) throws IOException {
    int n = 0;
    for (Segment s : segments(storage, folder)) {
      if (s.maxCommitMicros() < cutoffMicros) {
        storage.delete(s.path());
        n++;
      }
    }
    return n;
  }

  /** Deletes the whole change log (the table keeps no changes any more). */
  public static void deleteAll(Storage storage, String folder) throws IOException {
    for (String name : storage.list(folder)) {
      storage.delete(Storage.path(folder, name));
    }
    storage.delete(folder);
  }

  /**
   * Where a merged tablet's changes go on: the merged tablet, its row range, and the sequence
   * it starts after (its first manifest's).
   */
  public record Merged(String childId, byte[] startRow, byte[] endRow, long startsAfter) {}

  /** Records in {@code folder} that its tablet is being merged into {@code m}. */
  public static void writeMerged(Storage storage, String folder, Merged m) throws IOException {
    ByteSink b = new ByteSink(128);
    b.putString(MERGED_MAGIC).putString(m.childId()).putLengthPrefixed(m.startRow()).putLengthPrefixed(m.endRow())
        .putLong(m.startsAfter());
    storage.createDirectories(folder);
    String temp = Storage.path(folder, TEMP_PREFIX + UUID.randomUUID());
    try (WritableFile out = storage.create(temp)) {
      out.append(b.toArray());
      out.sync();
    }
    storage.rename(temp, Storage.path(folder, MERGED));
    storage.syncDirectory(folder);
  }

  /** The merge marker in {@code folder}, or null if there is none. */
  public static Merged readMerged(Storage storage, String folder) throws IOException {
    String p = Storage.path(folder, MERGED);
    if (!storage.exists(p)) {
      return null;
    }
    byte[] bytes;
    try (ReadableFile r = storage.open(p)) {
      if (r.size() > 256 * 1024) {
        throw new CorruptionException(p, 0, "a merge marker of " + r.size() + " bytes");
      }
      bytes = r.readFully(0, (int) r.size());
    }
    ByteBuffer in = ByteBuffer.wrap(bytes);
    try {
      if (!MERGED_MAGIC.equals(ByteSink.readString(in))) {
        throw new CorruptionException(p, 0, "not a merge marker");
      }
      Merged m = new Merged(ByteSink.readString(in), ByteSink.readBytes(in), ByteSink.readBytes(in), in.getLong());
      if (in.hasRemaining()) {
        throw new CorruptionException(p, in.position(), "unexpected bytes after a merge marker");
      }
      return m;
    } catch (BufferUnderflowException | IllegalArgumentException e) {
      throw new CorruptionException(p, in.position(), "malformed merge marker: " + e.getMessage());
    }
  }

  /** Deletes the merge marker in {@code folder}, if any: the tablet is served again. */
  public static void deleteMerged(Storage storage, String folder) throws IOException {
    storage.delete(Storage.path(folder, MERGED));
  }

  /** Deletes a temporary file after {@code failure}, to which a failure to delete it is added. */
  private static void deleteTemporary(Storage storage, String path, Exception failure) {
    try {
      storage.delete(path);
    } catch (IOException | RuntimeException e) {
      failure.addSuppressed(e);
    }
  }
}
