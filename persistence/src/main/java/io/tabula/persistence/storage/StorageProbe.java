package io.tabula.persistence.storage;

import java.io.IOException;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.regex.Pattern;

/**
 * A probe of the storage root: a file that one node writes with a random nonce, for another
 * node to read on its own root, which proves that the two see the same storage. The root's
 * identity ({@link RootIdentity}) tells two roots apart, but not a root from a copy of it: a
 * data folder copied with its {@code ROOT-ID} ({@code cp -a}), a VM image, a restored volume
 * snapshot carry the identity with them. A probe written after the copy was made is on one of
 * the two only.
 *
 * <pre>
 * probes/&lt;name&gt;: u64 magic "TBLAPROB" | u32 version (1) | u64 nonce high bits | u64 nonce low bits
 *                 | u32 CRC32C(bytes 0-27); fixed-width integers big-endian; 32 bytes
 * </pre>
 *
 * (docs/formats/storage-probe.md). A probe is written once, with an exclusive create, and
 * synced with its folder before its name and nonce are handed to anyone; it is deleted by
 * whoever wrote it once it is not needed. Stateless; thread-safe as the storage is.
 */
public final class StorageProbe {
  private StorageProbe() {}

  /** The folder at the top of the storage root that holds the probes. */
  public static final String FOLDER = ProbeFormat.FOLDER;
  /** What a probe's name may be: letters, digits, '.', '-' and '_' (a node's life), never ".." or a path. */
  private static final Pattern NAME = Pattern.compile("[A-Za-z0-9_.-]{1,200}");
  private static final String KIND = "storage probe";

  /**
   * Writes a new probe named {@code name} with a random nonce, durably (the file and its
   * folder synced), and returns the nonce. Blocks on file I/O.
   *
   * @throws java.nio.file.FileAlreadyExistsException if a probe of that name exists
   * @throws IllegalArgumentException if {@code name} is not a probe's name
   */
  public static UUID write(Storage storage, String name) throws IOException {
    UUID nonce = UUID.randomUUID();
    write(storage, name, nonce);
    return nonce;
  }

  static void write(Storage storage, String name, UUID nonce) throws IOException {
    try (WritableFile w = storage.createNew(path(name))) {
      w.append(encode(nonce));
      w.sync();
    }
    storage.syncDirectory(FOLDER);
  }

  /**
   * The nonce of the probe {@code name}, or empty if there is none. Blocks on file I/O.
   *
   * @throws CorruptionException if the file is damaged
   * @throws IllegalArgumentException if {@code name} is not a probe's name
   */
  public static Optional<UUID> read(Storage storage, String name) throws IOException {
    return IdFileCodec.read(storage, path(name), ProbeFormat.MAGIC, ProbeFormat.VERSION, KIND);
  }

  /** Deletes the probe {@code name}, if it is there. */
  public static void delete(Storage storage, String name) throws IOException {
    storage.delete(path(name));
  }

  /** The names of the probes on the root, sorted. */
  public static List<String> names(Storage storage) throws IOException {
    return storage.list(FOLDER);
  }

  /**
   * Whether {@code name} may name a probe: what {@link #read} and {@link #write} take (a name
   * from another node's configuration is checked before it is looked for).
   */
  public static boolean isName(String name) {
    return NAME.matcher(name).matches() && !name.contains("..");
  }

  private static String path(String name) {
    if (!isName(name)) {
      throw new IllegalArgumentException("not a storage probe's name: '" + name + "'");
    }
    return Storage.path(FOLDER, name);
  }

  static byte[] encode(UUID nonce) {
    return IdFileCodec.encode(ProbeFormat.MAGIC, ProbeFormat.VERSION, nonce);
  }

  static UUID decode(String file, byte[] bytes) throws CorruptionException {
    return IdFileCodec.decode(file, ProbeFormat.MAGIC, ProbeFormat.VERSION, KIND, bytes);
  }
}
