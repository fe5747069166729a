package io.tabula.persistence.tablet;

import io.tabula.persistence.encoding.ByteSink;
import io.tabula.persistence.encoding.VarInts;
import io.tabula.persistence.storage.CorruptionException;
import io.tabula.persistence.storage.ReadableFile;
import io.tabula.persistence.storage.Storage;
import io.tabula.persistence.storage.WritableFile;
import java.io.IOException;
import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.zip.CRC32C;

/**
 * Reads and writes a {@link TabletManifest} (docs/formats/manifest.md). Every change is a new
 * file, {@code MANIFEST-NNNNNNNNNN}, numbered one past the version its writer read, written to
 * a temporary file, fsynced and published with {@link Storage#renameIfAbsent}, which fails if
 * the name exists: of two writers that read the same version, exactly one publishes the next
 * (the other gets {@link ManifestConflictException}), and a crash leaves the old or the new
 * manifest, never a mix. The newest version is the manifest; older ones are deleted after a
 * publish. A folder from before versions has {@code MANIFEST}, read as version 0.
 *
 * <p>This is the fence for manifests: a tablet's new owner publishes a version of its own when
 * it opens the tablet ({@link #claim}), so a former owner that resumes after a freeze, and
 * commits a flush from what it read earlier, fails instead of replacing the new owner's
 * manifest (docs/fencing.md).
 *
 * <pre>
 * header: u64 magic "TBLAMNFT" | u32 version (2) | u32 body length | u32 CRC32C(body)
 * body:   bytes table | bytes tabletId | bytes startRow | bytes endRow | u8 state
 *         | i64 redoPoint | i64 lastSequence | i64 maxServerTime | varint nextFileNumber
 *         | varint groupCount × (bytes group | varint fileCount × (bytes path | u8 flags))
 *         | if state = SPLIT: bytes splitRow | bytes leftId | bytes rightId
 * bytes := varint length | bytes;  fixed-width integers big-endian;  flags bit 0 = owned
 * </pre>
 *
 * Version 1, still read, has no {@code maxServerTime} (read as 0: no server time known).
 */
public final class ManifestCodec {
  private ManifestCodec() {}

  /** How often a read retries when the version it listed was replaced before it opened it. */
  private static final int READ_ATTEMPTS = 5;

  /** A manifest and the version it was read at (the number in its file name; 0 for the unversioned file). */
  public record Versioned(TabletManifest manifest, long version) {}

  /** The file of version {@code version} in {@code dir}. */
  public static String path(String dir, long version) {
    return version == 0 ? Storage.path(dir, ManifestFormat.FILE_NAME)
        : Storage.path(dir, ManifestFormat.FILE_NAME + "-" + tenDigits(version));
  }

  /** {@code n} in at least ten digits, zeros first (String.format cost a node opening 100,000 tablets 2% of its CPU). */
  private static String tenDigits(long n) {
    String digits = Long.toString(n);
    return digits.length() >= 10 ? digits : "0000000000".substring(digits.length()) + digits;
  }

  /**
   * The names of this process's temporary files: a random prefix drawn once, and a count. A
   * random UUID per file took a lock (the system's secure random) that 64 threads opening
   * tablets queued on.
   */
  private static final String TEMP_PREFIX = ManifestFormat.TEMP_NAME + "-" + java.util.UUID.randomUUID() + "-";
  private static final java.util.concurrent.atomic.AtomicLong TEMPS = new java.util.concurrent.atomic.AtomicLong();

  public static boolean exists(Storage storage, String dir) throws IOException {
    return latestVersion(storage, dir) >= 0;
  }

  /** The newest version in {@code dir}, or -1 if it has no manifest. */
  /** Whether an owner ever opened the tablet in {@code dir}: its manifest is past the version it was made with. */
  public static boolean claimed(Storage storage, String dir) throws IOException {
    return latestVersion(storage, dir) > 1;
  }

  static long latestVersion(Storage storage, String dir) throws IOException {
    return storage.list(dir).stream().mapToLong(ManifestCodec::versionOf).max().orElse(-1);
  }

  /** The version a file name holds: 0 for {@code MANIFEST}, N for {@code MANIFEST-N}; -1 if it is no manifest. */
  private static long versionOf(String name) {
    String prefix = ManifestFormat.FILE_NAME + "-";
    if (name.equals(ManifestFormat.FILE_NAME)) {
      return 0;
    }
    if (name.startsWith(prefix) && name.length() == prefix.length() + 10
        && name.substring(prefix.length()).chars().allMatch(Character::isDigit)) {
      return Long.parseLong(name.substring(prefix.length()));
    }
    return -1;
  }

  /**
   * Publishes {@code m} as the first version of a new tablet's manifest, unless {@code dir} has
   * a manifest already (written by whoever got there first: a crash's repair, or a newer owner
   * finishing a split a frozen one began): then that one, as it is now, is returned, and
   * nothing is written. A former owner resuming never replaces what the tablet's next owners
   * wrote since.
   */
  public static Versioned create(Storage storage, String dir, TabletManifest m) throws IOException {
    if (exists(storage, dir)) {
      return readVersioned(storage, dir);
    }
    try {
      return new Versioned(m, commit(storage, dir, m, 0));
    } catch (ManifestConflictException | ManifestSupersededException taken) {
      return readVersioned(storage, dir);
    }
  }

  /**
   * Publishes {@code next} as version {@code read + 1}, where {@code read} is the version its
   * writer last read or wrote, and deletes the versions before it; returns that number.
   *
   * @throws ManifestConflictException if that version exists: nothing was published
   * @throws ManifestMaybeAdoptedException if it was published and then found superseded, or
   *     whether it was published is unknown (see {@link #publish})
   */
  public static long commit(Storage storage, String dir, TabletManifest next, long read) throws IOException {
    Published p = publish(storage, dir, next, read);
    deleteOlder(storage, dir, p);
    return p.version();
  }

  /** A version {@link #publish} published: its number, and the older versions' names the same listing found. */
  record Published(long version, List<String> older) {}

  /**
   * Publishes {@code next} as version {@code read + 1} and deletes nothing older: a tablet's
   * owner deletes what a change drops, older versions included, only once it has checked that
   * the change is its own to make ({@link TabletFiles}), then calls {@link #deleteOlder}. Each
   * outcome has its own type, so its writer knows whether the files written for the change may
   * go:
   * <ul>
   *   <li>returns: published, and no newer version was listed right after;
   *   <li>{@link ManifestConflictException}: the link was refused, since the version exists
   *       (another writer, a new owner, changed the manifest since). Nothing was published:
   *       the change's files are garbage, and its writer may delete them. A failure before the
   *       link (writing the temporary file) publishes nothing either;
   *   <li>{@link ManifestSupersededException}: published, then a newer version was listed. A
   *       new owner's claim may have adopted this version (it read it and published it again
   *       as its own), so the files it names may be the tablet's: nothing is deleted;
   *   <li>{@link ManifestOutcomeUnknownException}: the link, the folder's sync or the listing
   *       failed, so this version may be published and even the newest: nothing is deleted.
   * </ul>
   */
  static Published publish(Storage storage, String dir, TabletManifest next, long read) throws IOException {
    if (read < 0) {
      throw new IllegalArgumentException("a manifest version is at least 0, was " + read);
    }
    byte[] file = encode(next);
    String tmp = Storage.path(dir, TEMP_PREFIX + TEMPS.incrementAndGet());
    try (WritableFile w = storage.create(tmp)) {
      w.append(file);
      w.sync();
    }
    long version = read + 1;
    boolean linked;
    try {
      linked = storage.renameIfAbsent(tmp, path(dir, version));
    } catch (IOException | RuntimeException e) {
      throw new ManifestOutcomeUnknownException(dir, version, e);
    }
    if (!linked) {
      throw new ManifestConflictException(dir, version);
    }
    List<String> names;
    try {
      storage.syncDirectory(dir);
      // One listing serves both checks. Older versions are deleted after each publish, so a
      // writer far behind can publish a number freed that way; a newer version exists then.
      names = storage.list(dir);
    } catch (IOException | RuntimeException e) {
      throw new ManifestOutcomeUnknownException(dir, version, e);
    }
    long newest = names.stream().mapToLong(ManifestCodec::versionOf).max().orElse(-1);
    if (newest > version) {
      // Readers take the newest, so this version is never read again: it goes (a claim that
      // adopted it deleted it already).
      deleteQuietly(storage, path(dir, version));
      throw new ManifestSupersededException(dir, version, newest);
    }
    List<String> older = new ArrayList<>();
    for (String name : names) {
      long v = versionOf(name);
      if (v >= 0 && v < version) {
        older.add(name);
      }
    }
    return new Published(version, older);
  }

  /**
   * Deletes the versions before {@code p}, best effort: the change is made once {@code p} is
   * published, and a version left behind is harmless (readers take the newest; the next commit
   * deletes it). A reader that listed one being deleted reads again.
   */
  static void deleteOlder(Storage storage, String dir, Published p) {
    for (String name : p.older()) {
      deleteQuietly(storage, Storage.path(dir, name));
    }
  }

  private static void deleteQuietly(Storage storage, String path) {
    try {
      storage.delete(path);
    } catch (IOException leftBehind) {
      // An older version than the newest: readers never take it, and the next commit deletes it.
    }
  }

  /**
   * Reads the newest manifest in {@code dir} and publishes it again as the next version: a
   * tablet's owner does this as it opens the tablet, so that any earlier owner's later commit
   * fails. Returns the manifest and the version now held.
   */
  public static Versioned claim(Storage storage, String dir) throws IOException {
    for (int i = 0; ; i++) {
      Versioned read = readVersioned(storage, dir);
      try {
        return new Versioned(read.manifest(), commit(storage, dir, read.manifest(), read.version()));
      } catch (ManifestConflictException | ManifestSupersededException raced) {
        if (i >= READ_ATTEMPTS) {
          throw raced;
        }
      }
    }
  }

  public static TabletManifest read(Storage storage, String dir) throws IOException {
    return readVersioned(storage, dir).manifest();
  }

  /** The newest manifest in {@code dir} with its version. */
  public static Versioned readVersioned(Storage storage, String dir) throws IOException {
    for (int i = 0; ; i++) {
      long version = latestVersion(storage, dir);
      if (version < 0) {
        throw new java.nio.file.NoSuchFileException(path(dir, 1), null, "the tablet has no manifest");
      }
      try {
        return new Versioned(readFile(storage, path(dir, version)), version);
      } catch (java.nio.file.NoSuchFileException replaced) {
        if (i >= READ_ATTEMPTS) {
          throw replaced;
        }
      }
    }
  }

  private static TabletManifest readFile(Storage storage, String p) throws IOException {
    byte[] file;
    try (ReadableFile r = storage.open(p)) {
      if (r.size() < ManifestFormat.HEADER_BYTES) {
        throw new CorruptionException(p, 0, "file of " + r.size() + " bytes is shorter than the manifest header");
      }
      if (r.size() > ManifestFormat.HEADER_BYTES + ManifestFormat.MAX_BODY_BYTES) {
        throw new CorruptionException(p, 0, "file of " + r.size() + " bytes is larger than any manifest");
      }
      file = r.readFully(0, (int) r.size());
    }
    return decode(p, file);
  }

  static byte[] encode(TabletManifest m) {
    ByteSink body = new ByteSink(256);
    body.putString(m.table()).putString(m.tabletId()).putLengthPrefixed(m.startRow()).putLengthPrefixed(m.endRow())
        .putByte(m.state().code()).putLong(m.redoPoint()).putLong(m.lastSequence()).putLong(m.maxServerTime())
        .putVar(m.nextFileNumber()).putVar(m.groups().size());
    m.groups().forEach((g, files) -> {
      body.putString(g).putVar(files.size());
      for (TabletManifest.FileRef f : files) {
        body.putString(f.path()).putByte(f.owned() ? ManifestFormat.FILE_OWNED : 0);
      }
    });
    if (m.split() != null) {
      body.putLengthPrefixed(m.split().splitRow()).putString(m.split().leftId()).putString(m.split().rightId());
    }
    byte[] b = body.toArray();
    CRC32C crc = new CRC32C();
    crc.update(b);
    ByteBuffer out = ByteBuffer.allocate(ManifestFormat.HEADER_BYTES + b.length);
    out.putLong(ManifestFormat.MAGIC).putInt(ManifestFormat.VERSION).putInt(b.length).putInt((int) crc.getValue());
    out.put(b);
    return out.array();
  }

  static TabletManifest decode(String path, byte[] file) throws CorruptionException {
    ByteBuffer in = ByteBuffer.wrap(file);
    if (file.length < ManifestFormat.HEADER_BYTES) {
      throw new CorruptionException(path, 0, "shorter than the manifest header");
    }
    long magic = in.getLong(ManifestFormat.MAGIC_OFFSET);
    if (magic != ManifestFormat.MAGIC) {
      throw new CorruptionException(path, ManifestFormat.MAGIC_OFFSET, String.format("bad magic 0x%016x", magic));
    }
    int version = in.getInt(ManifestFormat.VERSION_OFFSET);
    if (version != ManifestFormat.VERSION && version != ManifestFormat.VERSION_WITHOUT_SERVER_TIME) {
      throw new CorruptionException(path, ManifestFormat.VERSION_OFFSET, "unknown manifest version " + version);
    }
    int len = in.getInt(ManifestFormat.BODY_LENGTH_OFFSET);
    if (len < 0 || len != file.length - ManifestFormat.HEADER_BYTES) {
      throw new CorruptionException(path, ManifestFormat.BODY_LENGTH_OFFSET, "body length " + len
          + " does not match the file's " + (file.length - ManifestFormat.HEADER_BYTES) + " bytes");
    }
    CRC32C crc = new CRC32C();
    crc.update(file, ManifestFormat.HEADER_BYTES, len);
    if ((int) crc.getValue() != in.getInt(ManifestFormat.BODY_CRC_OFFSET)) {
      throw new CorruptionException(path, ManifestFormat.HEADER_BYTES, "body checksum mismatch");
    }
    in.position(ManifestFormat.HEADER_BYTES);
    try {
      String table = ByteSink.readString(in);
      String id = ByteSink.readString(in);
      byte[] start = ByteSink.readBytes(in);
      byte[] end = ByteSink.readBytes(in);
      int stateOffset = in.position();
      TabletManifest.State state = TabletManifest.State.fromCode(in.get() & 0xFF);
      if (state == null) {
        throw new CorruptionException(path, stateOffset, "unknown tablet state code " + file[stateOffset]);
      }
      long redo = in.getLong();
      long last = in.getLong();
      long maxServerTime = version == ManifestFormat.VERSION_WITHOUT_SERVER_TIME ? 0 : in.getLong();
      long nextFile = VarInts.getVarLong(in);
      int groupCount = VarInts.getVarInt(in);
      Map<String, List<TabletManifest.FileRef>> groups = new LinkedHashMap<>();
      for (int g = 0; g < groupCount; g++) {
        String name = ByteSink.readString(in);
        int n = VarInts.getVarInt(in);
        List<TabletManifest.FileRef> files = new ArrayList<>();
        for (int i = 0; i < n; i++) {
          String p = ByteSink.readString(in);
          files.add(new TabletManifest.FileRef(p, (in.get() & ManifestFormat.FILE_OWNED) != 0));
        }
        groups.put(name, files);
      }
      TabletManifest.SplitInfo split = null;
      if (state == TabletManifest.State.SPLIT) {
        split = new TabletManifest.SplitInfo(ByteSink.readBytes(in), ByteSink.readString(in), ByteSink.readString(in));
      }
      if (in.hasRemaining()) {
        throw new CorruptionException(path, in.position(), in.remaining() + " unexpected bytes after the body");
      }
      return new TabletManifest(table, id, start, end, state, redo, last, maxServerTime, nextFile, groups, split);
    } catch (BufferUnderflowException | IllegalArgumentException e) {
      throw new CorruptionException(path, in.position(), "malformed body: " + e.getMessage());
    }
  }
}
