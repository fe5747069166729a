package io.tabula.persistence.memtable;

import com.google.errorprone.annotations.concurrent.GuardedBy;
import com.sun.management.HotSpotDiagnosticMXBean;
import java.lang.management.ManagementFactory;

/**
 * Where one memtable keeps its values: copied into large chunks, as HBase's MSLAB does, rather
 * than each in the array the request arrived in.
 *
 * <p>Why: a memtable's values live until it is flushed, seconds to minutes, while the young
 * generation is collected every few seconds under load. Each young collection copied every
 * live value it found there, some 64 MB of 1,000-byte values per busy tablet, and G1's young
 * pauses grew to 40 to 96 ms (bench/run-plain's Batcher loads, with {@code -Xlog:gc}). A chunk
 * of half a G1 region or more is a humongous object: G1 allocates it outside the young
 * generation and never copies it, and frees it at the first collection after the memtable
 * that held it is dropped. A memtable's first {@value #FIRST_CHUNK_BYTES} of values keep their
 * own arrays, and its chunks then start at that size and double up to just under a region, so
 * a tablet that takes few writes holds only its values.
 *
 * <p>Values of {@value #OWN_ARRAY_BYTES} bytes or more keep their own arrays: copying them buys
 * nothing a chunk would not, and they would waste its end. Thread-safe: {@link #copy} is
 * called by concurrent writers of the memtable.
 */
final class ValueSlab {
  /**
   * The largest chunk: a G1 region less the array's header. G1 allocates an array of half a
   * region or more as a humongous object, in regions of its own; one just under a region
   * fills one, where one of half a region would leave the other half empty.
   */
  static final int MAX_CHUNK_BYTES = maxChunkBytes();
  static final int FIRST_CHUNK_BYTES = 64 * 1024;
  /** Room for an array's header (16 bytes with compressed class pointers), and to spare. */
  private static final int ARRAY_HEADER_BYTES = 64;
  static final int OWN_ARRAY_BYTES = 16 * 1024;

  @GuardedBy("this")
  private byte[] chunk = new byte[0];
  @GuardedBy("this")
  private int used;
  /**
   * The bytes of the values kept in their own arrays because the memtable was still small; once
   * {@value #FIRST_CHUNK_BYTES}, values go to chunks. A node may hold a hundred thousand tablets
   * that each took a write or two: a first chunk each (64 KiB) was 6.4 GB for a bulk load of a
   * row per tablet of a table of 100,000 initial splits.
   */
  @GuardedBy("this")
  private long unchunked;

  /** {@code value} as the memtable keeps it. */
  Slice copy(byte[] value) {
    if (value.length >= OWN_ARRAY_BYTES || value.length == 0) {
      return new Slice(value, 0, value.length);
    }
    byte[] into;
    int at;
    synchronized (this) {
      if (chunk.length == 0 && unchunked < FIRST_CHUNK_BYTES) {
        unchunked += value.length;
        return new Slice(value, 0, value.length);
      }
      if (chunk.length - used < value.length) {
        chunk = new byte[nextChunkBytes(chunk.length)];
        used = 0;
      }
      into = chunk;
      at = used;
      used += value.length;
    }
    // Outside the lock: no other writer touches these bytes, and the tree publishes the entry
    // (a volatile write of its root) only after this copy.
    System.arraycopy(value, 0, into, at, value.length);
    return new Slice(into, at, value.length);
  }

  /**
   * Twice the last chunk, from {@value #FIRST_CHUNK_BYTES}; but a chunk that would be half a
   * region or more is made a whole one, since it would take a region of its own anyway.
   */
  static int nextChunkBytes(int last) {
    if (last == 0) {
      return FIRST_CHUNK_BYTES;
    }
    long next = 2L * last;
    return next >= MAX_CHUNK_BYTES / 2 ? MAX_CHUNK_BYTES : (int) next;
  }

  private static int maxChunkBytes() {
    long region = 0;
    try {
      String v = ManagementFactory.getPlatformMXBean(HotSpotDiagnosticMXBean.class).getVMOption("G1HeapRegionSize")
          .getValue();
      region = Long.parseLong(v);
    } catch (IllegalArgumentException | UnsupportedOperationException e) {
      // Not HotSpot, or no such option: the default below.
    }
    long chunk = region > 0 ? region - ARRAY_HEADER_BYTES : (2 << 20) - ARRAY_HEADER_BYTES;
    return (int) Math.max(FIRST_CHUNK_BYTES, Math.min(32 << 20, chunk));
  }

  /** A value in a chunk (or in an array of its own): {@code length} bytes from {@code offset}. Immutable. */
  record Slice(byte[] array, int offset, int length) {
    /** The value's bytes: the array itself when the value has one of its own, else a copy. */
    byte[] bytes() {
      return offset == 0 && length == array.length ? array : java.util.Arrays.copyOfRange(array, offset,
          offset + length);
    }
  }
}
