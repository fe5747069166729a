package io.tabula.persistence.sstable;

/**
 * How the payload of an SSTable block is compressed. The codes are stored in every block
 * trailer (docs/formats/sstable.md, "Block trailer"): never renumber, never reuse a
 * retired code.
 */
public enum Compression {
  /** Stored as is. */
  NONE(0),
  /** LZ4 block format: fast, modest ratio. */
  LZ4(1),
  /** Zstandard frame: slower, better ratio. */
  ZSTD(2);

  private final int code;

  Compression(int code) {
    this.code = code;
  }

  /** The byte stored on disk for this compression. */
  public int code() {
    return code;
  }

  /** The compression stored under {@code code}; null if the code is unknown (the caller reports corruption). */
  public static Compression fromCode(int code) {
    return switch (code) {
      case 0 -> NONE;
      case 1 -> LZ4;
      case 2 -> ZSTD;
      default -> null;
    };
  }
}
