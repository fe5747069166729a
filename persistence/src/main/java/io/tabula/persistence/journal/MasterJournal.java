package io.tabula.persistence.journal;

import com.google.errorprone.annotations.concurrent.GuardedBy;
import io.tabula.persistence.encoding.ByteSink;
import io.tabula.persistence.journal.JournalRead.History;
import io.tabula.persistence.journal.JournalRead.Segment;
import io.tabula.persistence.journal.JournalRecord.Event;
import io.tabula.persistence.journal.JournalRecord.Snapshot;
import io.tabula.persistence.storage.CorruptionException;
import io.tabula.persistence.storage.Storage;
import io.tabula.persistence.storage.WritableFile;
import java.io.Closeable;
import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.zip.CRC32C;

/**
 * The master's journal on the shared storage root (the paper keeps the METADATA tablets and
 * Chubby's files on GFS; this is the directory's event log), fenced per writer the way a
 * node's commit log is, so that no process can hold it hostage and no old master can add to
 * it unnoticed. The format is docs/formats/master-journal.md; the argument is in
 * docs/fencing.md.
 *
 * <p>Each master that {@linkplain #open opens} the journal becomes a new <em>epoch</em> with a
 * folder of its own under {@code dir}:
 *
 * <ol>
 *   <li>It claims the next epoch number by publishing {@code EEEEEEEEEE/EPOCH} with {@link
 *       Storage#renameIfAbsent}: of two claimants of one number exactly one wins, and the other
 *       takes the next.
 *   <li>It {@linkplain Storage#fence fences} every older epoch's folder. A writer checks its
 *       folder's fence after each append's fsync and acknowledges nothing once fenced, so
 *       everything an older master ever acknowledged is on disk before this master reads.
 *   <li>It reads the history: what the newest older epoch with a {@code HORIZON} listed (files
 *       and lengths), then that epoch's own segments to their last whole record ({@link
 *       JournalRead}).
 *   <li>It publishes its own {@code HORIZON}: exactly which files, to which length, it read (a
 *       fenced master may still append after the read; nobody ever reads that), minus segments
 *       whose every record is deleted, with a summary per persistence id (highest sequence
 *       number, deleted-to). Every later reader sees the history this master saw.
 *   <li>It appends to segments {@code EEEEEEEEEE/NNNNNN.log} of its own, rolled at a size.
 * </ol>
 *
 * <p>Thread-safe: every method may be called from any thread; {@link #append} holds this
 * object's lock during its write and fsync. The journal is written by one master at a time in
 * the cluster (the master lease); two at once is safe (the newer fences the older), only
 * wasteful.
 */
public final class MasterJournal implements Closeable {
  static final String EPOCH = "EPOCH";
  static final String HORIZON = "HORIZON";
  static final String SEGMENT_SUFFIX = ".log";
  /** ASCII "TBLAMJRN": TaBuLA Master JouRNal segment. */
  static final long SEGMENT_MAGIC = 0x54424C414D4A524EL;
  /** ASCII "TBLAMJHZ": TaBuLA Master Journal HoriZon. */
  static final long HORIZON_MAGIC = 0x54424C414D4A485AL;
  static final int VERSION = 1;
  /** magic | version | epoch | segment number | CRC32C of the previous 28 bytes. */
  static final int SEGMENT_HEADER = 8 + 4 + 8 + 8 + 4;
  /** length | CRC32C(length field + body). */
  static final int RECORD_HEADER = 8;
  /** A longer record can only be damage. */
  static final int MAX_RECORD = 256 << 20;
  /** How many epoch numbers one open tries before giving up (each lost race moves one on). */
  private static final int CLAIM_ATTEMPTS = 100;

  private final Storage storage;
  private final String dir;
  private final long epoch;
  private final long segmentBytes;
  private final String opened;
  /** Bytes of the segments this epoch's open kept: the live history it read. */
  private final long keptAtOpen;

  @GuardedBy("this")
  private final JournalHistory history;
  @GuardedBy("this")
  private WritableFile segment;
  @GuardedBy("this")
  private long segmentNumber;
  /** Set once an append failed or found the fence: nothing more is written. */
  @GuardedBy("this")
  private IOException broken;
  /** Bytes this epoch appended, framing included. */
  @GuardedBy("this")
  private long appended;

  private MasterJournal(Storage storage, String dir, long epoch, long segmentBytes, JournalHistory history,
      String opened, long keptAtOpen) {
    this.opened = opened;
    this.keptAtOpen = keptAtOpen;
    this.storage = storage;
    this.dir = dir;
    this.epoch = epoch;
    this.segmentBytes = segmentBytes;
    this.history = history;
  }

  /**
   * Opens the journal in {@code dir} as a new epoch: claims it, fences every older one, reads
   * the history and publishes this epoch's horizon (see the class comment). Segments roll once
   * they reach {@code segmentBytes}.
   *
   * @throws JournalFencedException if a newer epoch fenced this one while it opened
   * @throws CorruptionException if a file the history needs is damaged or missing
   */
  public static MasterJournal open(Storage storage, String dir, long segmentBytes) throws IOException {
    List<Long> existing = epochs(storage, dir);
    return open(storage, dir, segmentBytes, existing.isEmpty() ? 1 : existing.get(existing.size() - 1) + 1);
  }

  /** As {@link #open(Storage, String, long)}, trying epoch numbers from {@code firstTry} (from a listing made earlier). */
  static MasterJournal open(Storage storage, String dir, long segmentBytes, long firstTry) throws IOException {
    return open(storage, dir, segmentBytes, firstTry, 0);
  }

  /**
   * As {@link #open(Storage, String, long, long)}; unless {@code successorOf} is 0, the epoch
   * opened must directly follow epoch {@code successorOf} (no other epoch claimed between), or
   * nothing is fenced and the open fails ({@link #successor}).
   */
  static MasterJournal open(Storage storage, String dir, long segmentBytes, long firstTry, long successorOf)
      throws IOException {
    long epoch;
    List<Long> older;
    if (successorOf == 0) {
      epoch = claim(storage, dir, firstTry, CLAIM_ATTEMPTS);
      older = epochs(storage, dir);
    } else {
      // A renewal claims the very next number or none: a claim above another master's epoch
      // would keep that master from renewing its own (its newest epoch would not be its own).
      // One below it, left when the check below refuses, is ignored and fenced by later opens.
      epoch = claim(storage, dir, successorOf + 1, 1);
      older = epochs(storage, dir);
    }
    if (older.get(older.size() - 1) > epoch) {
      // The number was free only because a newer master removed that folder (it held no
      // segment) after this one listed the epochs, or (a renewal) another master's epoch is
      // newer than the one renewed: a newer epoch exists, so this one is stale.
      throw new JournalFencedException(dir, epoch);
    }
    long claimed = epoch;
    older.removeIf(e -> e >= claimed);
    for (long e : older) {
      storage.fence(epochDir(dir, e));
    }
    JournalHistory history = new JournalHistory();
    History read = JournalRead.readHistory(storage, dir, older, history);
    boolean[] keep = JournalRead.keep(read.segments(), history);
    List<Segment> kept = new ArrayList<>();
    for (int i = 0; i < read.segments().size(); i++) {
      if (keep[i]) {
        kept.add(read.segments().get(i));
      }
    }
    publish(storage, dir, epoch, new Horizon(kept.stream()
        .map(s -> new Horizon.File(s.path().substring(dir.length() + 1), s.length())).toList(),
        summaries(history)));
    if (fenced(storage, dir, epoch)) {
      throw new JournalFencedException(dir, epoch);
    }
    removeUnneeded(storage, dir, epoch, older, kept);
    String opened = "epoch " + epoch + " in " + dir + ": read " + read.segments().stream().mapToInt(Segment::records)
        .sum() + " records in " + read.segments().size() + " segments, kept " + kept.size();
    return new MasterJournal(storage, dir, epoch, segmentBytes, history, opened,
        kept.stream().mapToLong(Segment::length).sum());
  }

  /**
   * Opens the next epoch as this one's successor, for the same master: it fences this epoch,
   * reads the live history (which is this one's), publishes its horizon and deletes the
   * segments no reader needs any more, this epoch's among them. A master that runs long renews
   * its epoch so, or every snapshot it ever wrote would stay on the storage until the next
   * master's start. This epoch is closed once its successor is open. Nothing is fenced if a
   * newer epoch than this one exists already (another master's), or comes between: then this
   * epoch is stale, as its next append would find.
   *
   * @throws JournalFencedException if another master's epoch is newer than this one
   */
  public synchronized MasterJournal successor() throws IOException {
    if (broken != null) {
      throw broken instanceof JournalFencedException ? new JournalFencedException(dir, epoch)
          : new IOException("the master's journal epoch " + epoch + " failed earlier", broken);
    }
    List<Long> existing = epochs(storage, dir);
    if (existing.isEmpty() || existing.get(existing.size() - 1) != epoch || fenced(storage, dir, epoch)) {
      throw new JournalFencedException(dir, epoch);
    }
    // The segment in use is closed before the successor fences this epoch (on HDFS a fence
    // recovers the leases of the folder's open files); an append after a refused renewal
    // begins a new segment.
    if (segment != null) {
      WritableFile s = segment;
      segment = null;
      s.close();
    }
    MasterJournal next = open(storage, dir, segmentBytes, epoch + 1, epoch);
    close();
    return next;
  }

  /** Bytes this epoch has appended. */
  public synchronized long appendedBytes() {
    return appended;
  }

  /** Bytes of the live history this epoch read at its open (the segments it kept). */
  public long keptBytesAtOpen() {
    return keptAtOpen;
  }

  public long epoch() {
    return epoch;
  }

  /** What {@link #open} found, for the log: the epoch, how many records and segments it read, how many it kept. */
  @Override
  public String toString() {
    return opened;
  }

  /**
   * Appends {@code records} in one write and one fsync, and returns only if they are durable
   * and this epoch was not fenced after that fsync: then a newer master reads them.
   *
   * @throws JournalFencedException if this epoch is fenced (now or by an earlier append): not
   *     acknowledged, and nothing more will be written
   * @throws IOException if the write or fsync failed: not acknowledged, and nothing more will
   *     be written (after a failed fsync the file's state is unknown)
   */
  public synchronized void append(List<JournalRecord> records) throws IOException {
    if (broken != null) {
      throw broken instanceof JournalFencedException f ? new JournalFencedException(dir, epoch)
          : new IOException("the master's journal epoch " + epoch + " failed earlier", broken);
    }
    if (records.isEmpty()) {
      return;
    }
    ByteSink out = new ByteSink(256);
    for (JournalRecord r : records) {
      frame(r, out);
    }
    try {
      if (segment == null || segment.position() >= segmentBytes) {
        roll();
      }
      segment.append(out.array(), 0, out.size());
      segment.sync();
      appended += out.size();
    } catch (IOException e) {
      broken = e;
      throw e;
    }
    if (fenced(storage, dir, epoch)) {
      broken = new JournalFencedException(dir, epoch);
      throw (JournalFencedException) broken;
    }
    records.forEach(history::apply);
  }

  @GuardedBy("this")
  private void roll() throws IOException {
    if (segment != null) {
      segment.close();
    }
    segmentNumber++;
    String path = Storage.path(epochDir(dir, epoch), segmentName(segmentNumber));
    segment = storage.create(path);
    segment.append(segmentHeader(epoch, segmentNumber));
    segment.sync();
    storage.syncDirectory(epochDir(dir, epoch));
  }

  /** The highest sequence number ever stored for {@code persistenceId} (deleted events included); 0 if none. */
  public synchronized long highestSequenceNr(String persistenceId) {
    return history.highestSequenceNr(persistenceId);
  }

  /** Live events of {@code persistenceId} numbered {@code from} to {@code to} (inclusive), at most {@code max}, in order. */
  public synchronized List<Event> events(String persistenceId, long from, long to, long max) {
    return history.events(persistenceId, Math.max(from, history.deletedTo(persistenceId) + 1), to, max);
  }

  /** The newest live snapshot within the bounds (inclusive), if any. */
  public synchronized Optional<Snapshot> latestSnapshot(String persistenceId, long minSequenceNr,
      long maxSequenceNr, long minTimestamp, long maxTimestamp) {
    return history.latestSnapshot(persistenceId, minSequenceNr, maxSequenceNr, minTimestamp, maxTimestamp);
  }

  /**
   * Whether a newer master has fenced this epoch: its folder has the fence marker, or its
   * claim is gone. Looks at the storage now; the writer of this epoch may ask it between
   * appends, as the master's file sweep does before it deletes.
   */
  public boolean isFenced() {
    return fenced(storage, dir, epoch);
  }

  /** Closes the current segment; appends after this fail. Idempotent. */
  @Override
  public synchronized void close() throws IOException {
    if (broken == null) {
      broken = new IOException("closed");
    }
    if (segment != null) {
      WritableFile s = segment;
      segment = null;
      s.close();
    }
  }

  /**
   * Whether epoch {@code epoch} is fenced: its folder has the fence marker, or a newer master
   * removed the folder (its {@code EPOCH} claim is gone; removal deletes that first).
   */
  private static boolean fenced(Storage storage, String dir, long epoch) {
    String ed = epochDir(dir, epoch);
    return storage.isFenced(ed) || !storage.exists(Storage.path(ed, EPOCH));
  }

  // ---- opening ----

  /**
   * Claims the first free epoch number from {@code firstTry} on, trying {@code attempts}
   * numbers; returns it.
   *
   * @throws JournalFencedException if a renewal's one number ({@code attempts} 1) is taken:
   *     another master's epoch
   */
  private static long claim(Storage storage, String dir, long firstTry, int attempts) throws IOException {
    long next = firstTry;
    for (int i = 0; i < attempts; i++, next++) {
      String tmp = Storage.path(dir, "claim-" + UUID.randomUUID() + ".tmp");
      try (WritableFile f = storage.create(tmp)) {
        f.sync();
      }
      if (storage.renameIfAbsent(tmp, Storage.path(epochDir(dir, next), EPOCH))) {
        storage.syncDirectory(epochDir(dir, next));
        storage.syncDirectory(dir);
        return next;
      }
    }
    if (attempts == 1) {
      throw new JournalFencedException(dir, firstTry - 1);
    }
    throw new IOException("could not claim an epoch of the master's journal in " + dir + " after "
        + attempts + " attempts: other masters keep claiming");
  }

  /** Whether no master ever opened the journal in {@code dir} (it has no epoch). */
  public static boolean isNew(Storage storage, String dir) throws IOException {
    return epochs(storage, dir).isEmpty();
  }

  /** Epoch numbers with a folder under {@code dir}, ascending. */
  static List<Long> epochs(Storage storage, String dir) throws IOException {
    List<Long> out = new ArrayList<>();
    for (String name : storage.list(dir)) {
      if (name.length() == 10 && name.chars().allMatch(Character::isDigit)) {
        out.add(Long.parseLong(name));
      }
    }
    out.sort(null);
    return out;
  }

  /** The segment files in the epoch folder {@code epochDir}, as paths. */
  static List<String> segments(Storage storage, String epochDir) throws IOException {
    List<String> out = new ArrayList<>();
    for (String name : storage.list(epochDir)) {
      if (name.endsWith(SEGMENT_SUFFIX)) {
        out.add(Storage.path(epochDir, name));
      }
    }
    return out;
  }

  private static Map<String, long[]> summaries(JournalHistory history) {
    Map<String, long[]> out = new LinkedHashMap<>();
    for (String id : history.persistenceIds()) {
      out.put(id, new long[] {history.highestSequenceNr(id), history.deletedTo(id)});
    }
    return out;
  }

  private static void publish(Storage storage, String dir, long epoch, Horizon h) throws IOException {
    String tmp = Storage.path(epochDir(dir, epoch), HORIZON + "-" + UUID.randomUUID() + ".tmp");
    try (WritableFile f = storage.create(tmp)) {
      f.append(h.encode(epoch));
      f.sync();
    }
    if (!storage.renameIfAbsent(tmp, Storage.path(epochDir(dir, epoch), HORIZON))) {
      throw new IOException("epoch " + epoch + " of the master's journal in " + dir + " has a horizon already");
    }
    storage.syncDirectory(epochDir(dir, epoch));
  }

  /**
   * Deletes what no reader needs any more: segments of older epochs this horizon left out, and
   * older epoch folders left with no segment. A newer master that read the older horizon in
   * the meantime fails to find them and opens again, reading this horizon.
   */
  private static void removeUnneeded(Storage storage, String dir, long epoch, List<Long> older, List<Segment> kept)
      throws IOException {
    List<String> keptPaths = kept.stream().map(Segment::path).toList();
    for (long e : older) {
      String ed = epochDir(dir, e);
      boolean empty = true;
      for (String s : segments(storage, ed)) {
        if (keptPaths.contains(s)) {
          empty = false;
        } else {
          storage.delete(s);
        }
      }
      if (empty) {
        storage.delete(Storage.path(ed, EPOCH)); // first: it keeps a writer of this epoch fenced
        for (String name : storage.list(ed)) {
          storage.delete(Storage.path(ed, name));
        }
        storage.delete(ed);
      }
    }
    storage.syncDirectory(dir);
  }

  // ---- encoding ----

  static String epochDir(String dir, long epoch) {
    return Storage.path(dir, String.format("%010d", epoch));
  }

  static String segmentName(long number) {
    return String.format("%06d%s", number, SEGMENT_SUFFIX);
  }

  static byte[] segmentHeader(long epoch, long number) {
    byte[] h = new byte[SEGMENT_HEADER];
    ByteSink.putLongAt(h, 0, SEGMENT_MAGIC);
    ByteSink.putIntAt(h, 8, VERSION);
    ByteSink.putLongAt(h, 12, epoch);
    ByteSink.putLongAt(h, 20, number);
    ByteSink.putIntAt(h, SEGMENT_HEADER - 4, crc(h, 0, SEGMENT_HEADER - 4, new byte[0]));
    return h;
  }

  /** Appends {@code r} framed: {@code u32 length | u32 CRC32C(length field + body) | body}. */
  static void frame(JournalRecord r, ByteSink out) {
    ByteSink body = new ByteSink(64);
    JournalRecord.encode(r, body);
    byte[] head = new byte[RECORD_HEADER];
    ByteSink.putIntAt(head, 0, body.size());
    ByteSink.putIntAt(head, 4, crc(head, 0, 4, body.toArray()));
    out.put(head).put(body.array(), 0, body.size());
  }

  static int crc(byte[] b, int off, int len, byte[] more) {
    CRC32C c = new CRC32C();
    c.update(b, off, len);
    c.update(more, 0, more.length);
    return (int) c.getValue();
  }
}
