package io.tabula.persistence.storage;

import java.io.FileNotFoundException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.NoSuchFileException;
import java.util.Optional;
import java.util.UUID;
import java.util.zip.CRC32C;

/**
 * The identity of a storage root: a random id, written once, by whichever node first finds
 * the root without one, in the file {@value RootIdFormat#FILE_NAME} at the top of the root
 * (docs/formats/root-id.md). Every node of a cluster must see one shared storage root
 * (docs/deploy.md); the id is how they tell: nodes compare theirs when one joins, and a node
 * reads it again before it opens a tablet or fences another node's logs, so a node on another
 * root (another machine's local disk, another {@code --data}) is refused instead of opening
 * tablets that are not there as empty ones.
 *
 * <pre>
 * u64 magic "TBLAROOT" | u32 version (1) | u64 id high bits | u64 id low bits | u32 CRC32C(bytes 0-27)
 * fixed-width integers big-endian; 32 bytes
 * </pre>
 *
 * <p>Creation is exclusive: the writer fsyncs a temporary file of its own and publishes it
 * with {@link Storage#renameIfAbsent}, then reads the file back. Of two nodes that start at
 * once on a fresh root exactly one publishes, and both return the winner's id. The file is
 * never rewritten. Stateless; thread-safe as the storage is.
 */
public final class RootIdentity {
  private RootIdentity() {}

  /** The name of the identity file at the top of the storage root. */
  public static final String FILE = RootIdFormat.FILE_NAME;

  /**
   * The root's identity, or empty if it has none yet.
   *
   * @throws CorruptionException if the file is damaged (never read as "none": a new identity
   *     would then make the root another one)
   */
  public static Optional<UUID> read(Storage storage) throws IOException {
    byte[] bytes;
    try (ReadableFile f = storage.open(FILE)) {
      if (f.size() != RootIdFormat.FILE_BYTES) {
        throw new CorruptionException(FILE, Math.min(f.size(), RootIdFormat.FILE_BYTES), "the file has " + f.size()
            + " bytes, not " + RootIdFormat.FILE_BYTES);
      }
      bytes = new byte[RootIdFormat.FILE_BYTES];
      f.readFully(0, bytes, 0, bytes.length);
    } catch (NoSuchFileException | FileNotFoundException absent) {
      return Optional.empty();
    }
    return Optional.of(decode(FILE, bytes));
  }

  /**
   * The root's identity, creating it first (a new random id) if the root has none. Blocks on
   * file I/O.
   */
  public static UUID establish(Storage storage) throws IOException {
    return establish(storage, UUID.randomUUID());
  }

  /** {@link #establish} with {@code candidate} as the id it writes if it is the first. */
  static UUID establish(Storage storage, UUID candidate) throws IOException {
    Optional<UUID> present = read(storage);
    if (present.isPresent()) {
      return present.get();
    }
    String tmp = RootIdFormat.TEMP_PREFIX + candidate;
    try (WritableFile w = storage.create(tmp)) {
      w.append(encode(candidate));
      w.sync();
    }
    // The loser's temporary file is deleted by renameIfAbsent; either way the file read back is the root's.
    storage.renameIfAbsent(tmp, FILE);
    storage.syncDirectory("");
    return read(storage).orElseThrow(() -> new NoSuchFileException(FILE, null,
        "the storage root's identity file is gone right after it was published"));
  }

  /**
   * Checks that the root {@code storage} (named {@code rootName} in the error) still has the
   * identity {@code expected}, reading it again now.
   *
   * @param refused what is not done if it has not, for the error: "tablet t1 is not opened"
   * @throws RootMismatchException if the root's identity is another, or it has none
   */
  public static void check(Storage storage, String rootName, UUID expected, String refused) throws IOException {
    Optional<UUID> found = read(storage);
    if (found.isEmpty() || !found.get().equals(expected)) {
      throw new RootMismatchException(refused, rootName, expected, found.orElse(null));
    }
  }

  static byte[] encode(UUID id) {
    ByteBuffer b = ByteBuffer.allocate(RootIdFormat.FILE_BYTES);
    b.putLong(RootIdFormat.MAGIC_OFFSET, RootIdFormat.MAGIC);
    b.putInt(RootIdFormat.VERSION_OFFSET, RootIdFormat.VERSION);
    b.putLong(RootIdFormat.ID_HIGH_OFFSET, id.getMostSignificantBits());
    b.putLong(RootIdFormat.ID_LOW_OFFSET, id.getLeastSignificantBits());
    b.putInt(RootIdFormat.CRC_OFFSET, crc(b.array()));
    return b.array();
  }

  /** The id in {@code bytes}, the whole file {@code file}; every field is checked. */
  static UUID decode(String file, byte[] bytes) throws CorruptionException {
    if (bytes.length != RootIdFormat.FILE_BYTES) {
      throw new CorruptionException(file, Math.min(bytes.length, RootIdFormat.FILE_BYTES), "the file has "
          + bytes.length + " bytes, not " + RootIdFormat.FILE_BYTES);
    }
    ByteBuffer b = ByteBuffer.wrap(bytes);
    if (b.getLong(RootIdFormat.MAGIC_OFFSET) != RootIdFormat.MAGIC) {
      throw new CorruptionException(file, RootIdFormat.MAGIC_OFFSET, "bad magic number: not a storage root's "
          + "identity file");
    }
    if (b.getInt(RootIdFormat.CRC_OFFSET) != crc(bytes)) {
      throw new CorruptionException(file, RootIdFormat.MAGIC_OFFSET, "checksum mismatch over bytes 0-"
          + (RootIdFormat.CRC_OFFSET - 1));
    }
    int version = b.getInt(RootIdFormat.VERSION_OFFSET);
    if (version != RootIdFormat.VERSION) {
      throw new CorruptionException(file, RootIdFormat.VERSION_OFFSET, "unknown format version " + version);
    }
    return new UUID(b.getLong(RootIdFormat.ID_HIGH_OFFSET), b.getLong(RootIdFormat.ID_LOW_OFFSET));
  }

  private static int crc(byte[] bytes) {
    CRC32C c = new CRC32C();
    c.update(bytes, 0, RootIdFormat.CRC_OFFSET);
    return (int) c.getValue();
  }
}
