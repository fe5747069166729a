package io.tabula.persistence.storage;

import java.io.FileNotFoundException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.NoSuchFileException;
import java.util.Optional;
import java.util.UUID;
import java.util.zip.CRC32C;

/**
 * Writes and reads the 32-byte files that hold one id: the storage root's identity ({@code
 * ROOT-ID}, docs/formats/root-id.md) and a storage probe (docs/formats/storage-probe.md). Both
 * have {@link RootIdFormat}'s layout, each with a magic number of its own:
 *
 * <pre>
 * u64 magic | u32 version | u64 id high bits | u64 id low bits | u32 CRC32C(bytes 0-27)
 * </pre>
 *
 * Stateless.
 */
final class IdFileCodec {
  private IdFileCodec() {}

  static byte[] encode(long magic, int version, UUID id) {
    ByteBuffer b = ByteBuffer.allocate(RootIdFormat.FILE_BYTES);
    b.putLong(RootIdFormat.MAGIC_OFFSET, magic);
    b.putInt(RootIdFormat.VERSION_OFFSET, version);
    b.putLong(RootIdFormat.ID_HIGH_OFFSET, id.getMostSignificantBits());
    b.putLong(RootIdFormat.ID_LOW_OFFSET, id.getLeastSignificantBits());
    b.putInt(RootIdFormat.CRC_OFFSET, crc(b.array()));
    return b.array();
  }

  /**
   * The id in {@code bytes}, the whole file {@code file}, a {@code kind} ("storage root's
   * identity file") with magic {@code magic} and format {@code version}; every field is checked.
   */
  static UUID decode(String file, long magic, int version, String kind, byte[] bytes) throws CorruptionException {
    if (bytes.length != RootIdFormat.FILE_BYTES) {
      throw new CorruptionException(file, Math.min(bytes.length, RootIdFormat.FILE_BYTES), "the file has "
          + bytes.length + " bytes, not " + RootIdFormat.FILE_BYTES);
    }
    ByteBuffer b = ByteBuffer.wrap(bytes);
    if (b.getLong(RootIdFormat.MAGIC_OFFSET) != magic) {
      throw new CorruptionException(file, RootIdFormat.MAGIC_OFFSET, "bad magic number: not a " + kind);
    }
    if (b.getInt(RootIdFormat.CRC_OFFSET) != crc(bytes)) {
      throw new CorruptionException(file, RootIdFormat.MAGIC_OFFSET, "checksum mismatch over bytes 0-"
          + (RootIdFormat.CRC_OFFSET - 1));
    }
    int found = b.getInt(RootIdFormat.VERSION_OFFSET);
    if (found != version) {
      throw new CorruptionException(file, RootIdFormat.VERSION_OFFSET, "unknown format version " + found);
    }
    return new UUID(b.getLong(RootIdFormat.ID_HIGH_OFFSET), b.getLong(RootIdFormat.ID_LOW_OFFSET));
  }

  /**
   * The id in the file {@code file} of {@code storage}, or empty if there is no such file.
   *
   * @throws CorruptionException if the file is damaged (never read as absent)
   */
  static Optional<UUID> read(Storage storage, String file, long magic, int version, String kind)
      throws IOException {
    byte[] bytes;
    try (ReadableFile f = storage.open(file)) {
      if (f.size() != RootIdFormat.FILE_BYTES) {
        throw new CorruptionException(file, Math.min(f.size(), RootIdFormat.FILE_BYTES), "the file has " + f.size()
            + " bytes, not " + RootIdFormat.FILE_BYTES);
      }
      bytes = new byte[RootIdFormat.FILE_BYTES];
      f.readFully(0, bytes, 0, bytes.length);
    } catch (NoSuchFileException | FileNotFoundException absent) {
      return Optional.empty();
    }
    return Optional.of(decode(file, magic, version, kind, bytes));
  }

  private static int crc(byte[] bytes) {
    CRC32C c = new CRC32C();
    c.update(bytes, 0, RootIdFormat.CRC_OFFSET);
    return (int) c.getValue();
  }
}
