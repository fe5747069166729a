package io.tabula.persistence.sstable;

import com.github.luben.zstd.Zstd;
import com.github.luben.zstd.ZstdException;
import io.tabula.persistence.encoding.ByteSink;
import io.tabula.persistence.encoding.VarInts;
import io.tabula.persistence.storage.CorruptionException;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.zip.CRC32C;
import net.jpountz.lz4.LZ4Compressor;
import net.jpountz.lz4.LZ4Exception;
import net.jpountz.lz4.LZ4Factory;
import net.jpountz.lz4.LZ4SafeDecompressor;

/**
 * A block as stored (docs/formats/sstable.md, "Block trailer"):
 *
 * <pre>
 * payload | u8 compressionCode | u32 crc32c(payload | compressionCode)
 * payload := raw block                                   (NONE)
 *          | varint rawLength | compressed raw block     (LZ4, ZSTD)
 * </pre>
 *
 * Stateless; thread-safe.
 */
final class BlockCodec {
  // The pure-Java LZ4 so that the same input gives the same bytes on every platform.
  private static final LZ4Factory LZ4 = LZ4Factory.fastestJavaInstance();

  private BlockCodec() {}

  /** A checked, decompressed block: {@code array[offset, offset + length)}. */
  record Raw(byte[] array, int offset, int length) {}

  /** Payload and trailer of {@code raw}, compressed with {@code c} if that saves enough. */
  static byte[] encode(byte[] raw, Compression c) {
    byte[] compressed = switch (c) {
      case NONE -> null;
      case LZ4 -> lz4(raw);
      case ZSTD -> zstd(raw);
    };
    boolean keep = compressed != null && compressed.length <= raw.length - raw.length / SSTableFormat.MIN_SAVING_DIVISOR;
    byte[] payload = keep ? compressed : raw;
    Compression stored = keep ? c : Compression.NONE;
    byte[] out = new byte[payload.length + SSTableFormat.BLOCK_TRAILER_SIZE];
    System.arraycopy(payload, 0, out, 0, payload.length);
    out[payload.length + SSTableFormat.TRAILER_CODE_OFFSET] = (byte) stored.code();
    ByteSink.putIntAt(out, payload.length + SSTableFormat.TRAILER_CRC_OFFSET, crc(out, 0, payload.length + 1));
    return out;
  }

  /**
   * Checks and decompresses the stored block at {@code stored[off]}: {@code payloadLength}
   * bytes of payload followed by the trailer. {@code fileOffset} names it in errors.
   */
  static Raw decode(byte[] stored, int off, int payloadLength, String file, long fileOffset)
      throws CorruptionException {
    int codeAt = off + payloadLength + SSTableFormat.TRAILER_CODE_OFFSET;
    int expected = ByteSink.getIntAt(stored, off + payloadLength + SSTableFormat.TRAILER_CRC_OFFSET);
    int actual = crc(stored, off, payloadLength + 1);
    if (expected != actual) {
      throw new CorruptionException(file, fileOffset, String.format(
          "block checksum mismatch: stored %08x, computed %08x over %d bytes", expected, actual, payloadLength + 1));
    }
    int code = stored[codeAt] & 0xFF;
    Compression c = Compression.fromCode(code);
    if (c == null) {
      throw new CorruptionException(file, fileOffset, "unknown compression code " + code);
    }
    if (c == Compression.NONE) {
      return new Raw(stored, off, payloadLength);
    }
    ByteBuffer in = ByteBuffer.wrap(stored, off, payloadLength);
    int rawLength;
    try {
      rawLength = VarInts.getVarInt(in);
    } catch (IllegalArgumentException e) {
      throw new CorruptionException(file, fileOffset, "bad uncompressed length: " + e.getMessage());
    }
    int src = in.position();
    int srcLen = off + payloadLength - src;
    byte[] raw = new byte[rawLength];
    int produced;
    try {
      produced = switch (c) {
        case LZ4 -> lz4Decompressor().decompress(stored, src, srcLen, raw, 0, rawLength);
        case ZSTD -> zstdDecompress(stored, src, srcLen, raw);
        case NONE -> throw new AssertionError();
      };
    } catch (LZ4Exception | ZstdException e) {
      throw new CorruptionException(file, fileOffset, c + " payload does not decompress: " + e.getMessage());
    }
    if (produced != rawLength) {
      throw new CorruptionException(file, fileOffset, c + " payload decompressed to " + produced + " bytes, header says "
          + rawLength);
    }
    return new Raw(raw, 0, rawLength);
  }

  static int crc(byte[] b, int off, int len) {
    CRC32C crc = new CRC32C();
    crc.update(b, off, len);
    return (int) crc.getValue();
  }

  private static byte[] lz4(byte[] raw) {
    LZ4Compressor comp = LZ4.fastCompressor();
    int header = VarInts.sizeOf(raw.length);
    byte[] out = new byte[header + comp.maxCompressedLength(raw.length)];
    VarInts.putVarLong(out, 0, raw.length);
    int n = comp.compress(raw, 0, raw.length, out, header, out.length - header);
    return Arrays.copyOf(out, header + n);
  }

  private static LZ4SafeDecompressor lz4Decompressor() {
    return LZ4.safeDecompressor();
  }

  private static byte[] zstd(byte[] raw) {
    byte[] body = Zstd.compress(raw, SSTableFormat.ZSTD_LEVEL);
    int header = VarInts.sizeOf(raw.length);
    byte[] out = new byte[header + body.length];
    VarInts.putVarLong(out, 0, raw.length);
    System.arraycopy(body, 0, out, header, body.length);
    return out;
  }

  private static int zstdDecompress(byte[] src, int off, int len, byte[] dst) {
    long r = Zstd.decompressByteArray(dst, 0, dst.length, src, off, len);
    if (Zstd.isError(r)) {
      throw new ZstdException(r);
    }
    return (int) r;
  }
}
