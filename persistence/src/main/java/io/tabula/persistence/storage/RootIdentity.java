package io.tabula.persistence.storage;

import java.io.IOException;
import java.nio.file.NoSuchFileException;
import java.util.Optional;
import java.util.UUID;

/**
 * The identity of a storage root: a random id, written once, by whichever node first finds
 * the root without one, in the file {@value RootIdFormat#FILE_NAME} at the top of the root
 * (docs/formats/root-id.md). Every node of a cluster must see one shared storage root
 * (docs/deploy.md); the id is how they tell: nodes compare theirs when one joins, and a node
 * reads it again before it opens a tablet or fences another node's logs, so a node on another
 * root (another machine's local disk, another {@code --data}) is refused instead of opening
 * tablets that are not there as empty ones. A copy of the root has the same id: at join a
 * {@link StorageProbe} tells it apart.
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
  /** What the file is, for errors. */
  private static final String KIND = "storage root's identity file";

  /**
   * The root's identity, or empty if it has none yet.
   *
   * @throws CorruptionException if the file is damaged (never read as "none": a new identity
   *     would then make the root another one)
   */
  public static Optional<UUID> read(Storage storage) throws IOException {
    return IdFileCodec.read(storage, FILE, RootIdFormat.MAGIC, RootIdFormat.VERSION, KIND);
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
    return IdFileCodec.encode(RootIdFormat.MAGIC, RootIdFormat.VERSION, id);
  }

  /** The id in {@code bytes}, the whole file {@code file}; every field is checked. */
  static UUID decode(String file, byte[] bytes) throws CorruptionException {
    return IdFileCodec.decode(file, RootIdFormat.MAGIC, RootIdFormat.VERSION, KIND, bytes);
  }
}
