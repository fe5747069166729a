package io.tabula.persistence.tablet;

/**
 * Constants of the tablet manifest file; see docs/formats/manifest.md.
 *
 * <pre>
 * offset 0  u64 magic            "TBLAMNFT"
 * offset 8  u32 format version   2 (1 is still read: no maxServerTime in the body)
 * offset 12 u32 body length      n
 * offset 16 u32 CRC32C of body
 * offset 20 body (n bytes)
 * </pre>
 */
final class ManifestFormat {
  private ManifestFormat() {}

  /** ASCII "TBLAMNFT": TaBuLA MaNiFesT. */
  static final long MAGIC = 0x54424C414D4E4654L;
  /** Written by this code: the body has {@code maxServerTime}. */
  static final int VERSION = 2;
  /** Still read: the body of version 2 without {@code maxServerTime}, which reads as 0. */
  static final int VERSION_WITHOUT_SERVER_TIME = 1;

  static final int MAGIC_OFFSET = 0;
  static final int VERSION_OFFSET = MAGIC_OFFSET + 8;
  static final int BODY_LENGTH_OFFSET = VERSION_OFFSET + 4;
  static final int BODY_CRC_OFFSET = BODY_LENGTH_OFFSET + 4;
  static final int HEADER_BYTES = BODY_CRC_OFFSET + 4;

  /** A manifest is small; anything claiming more is corrupt. */
  static final int MAX_BODY_BYTES = 64 * 1024 * 1024;

  /** File flag bit: the tablet owns the file. */
  static final int FILE_OWNED = 1;

  static final String FILE_NAME = "MANIFEST";
  static final String TEMP_NAME = "MANIFEST.tmp";
}
