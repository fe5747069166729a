package io.tabula.persistence.storage;

/**
 * Constants of the storage root's identity file; see docs/formats/root-id.md. A storage probe
 * has the same layout with a magic number of its own ({@link ProbeFormat}); {@link IdFileCodec}
 * writes and reads both.
 *
 * <pre>
 * offset 0  u64 magic            "TBLAROOT"
 * offset 8  u32 format version   1
 * offset 12 u64 id, high bits    a version-4 (random) UUID, big-endian
 * offset 20 u64 id, low bits
 * offset 28 u32 CRC32C of bytes 0 to 27
 * 32 bytes in all
 * </pre>
 */
final class RootIdFormat {
  private RootIdFormat() {}

  /** ASCII "TBLAROOT": TaBuLA ROOT. */
  static final long MAGIC = 0x54424C41524F4F54L;
  static final int VERSION = 1;

  static final int MAGIC_OFFSET = 0;
  static final int VERSION_OFFSET = MAGIC_OFFSET + 8;
  static final int ID_HIGH_OFFSET = VERSION_OFFSET + 4;
  static final int ID_LOW_OFFSET = ID_HIGH_OFFSET + 8;
  static final int CRC_OFFSET = ID_LOW_OFFSET + 8;
  static final int FILE_BYTES = CRC_OFFSET + 4;

  /** The file's name, at the top of the storage root. */
  static final String FILE_NAME = "ROOT-ID";
  /** The prefix of a writer's temporary file, published under {@link #FILE_NAME}. */
  static final String TEMP_PREFIX = FILE_NAME + ".tmp-";
}
