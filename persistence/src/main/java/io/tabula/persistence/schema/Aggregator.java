package io.tabula.persistence.schema;

import com.google.zetasketch.HyperLogLogPlusPlus;
import java.nio.ByteBuffer;

/**
 * How an aggregate family (Cloud Bigtable's {@code Type.Aggregate}) combines the values
 * written to one cell: the engine's merge operator. A cell of such a family is the fold of
 * every operand written to its (row, family, qualifier, timestamp) since the last delete
 * that covered it; operands and folds are states of the same form, so a fold of folds is
 * a fold (the operators are associative and commutative, and reads, flushes and compactions
 * may fold any subset of a cell's operands in any order).
 *
 * <ul>
 *   <li>{@link #SUM}, {@link #MIN}, {@link #MAX}: an Int64 input; the state is 8 bytes, the
 *       value big-endian (Cloud Bigtable's {@code Int64.BigEndianBytes}). A sum wraps around
 *       on overflow, as two's complement addition does (Google's emulator does the same).
 *   <li>{@link #HLL}: HyperLogLog++ unique count of Int64 inputs; the state is a serialized
 *       ZetaSketch sketch (the form Cloud Bigtable and BigQuery's {@code HLL_COUNT} share),
 *       precision 15 (about 0.6% standard error).
 * </ul>
 *
 * The codes are stored (the master's journal, backup manifests): never renumber. Stateless
 * and thread-safe.
 */
public enum Aggregator {
  SUM(1),
  MIN(2),
  MAX(3),
  HLL(4);

  private static final int INT64_BYTES = 8;

  private final int code;

  Aggregator(int code) {
    this.code = code;
  }

  public int code() {
    return code;
  }

  /** The aggregator stored under {@code code}; null if the code is unknown. */
  public static Aggregator fromCode(int code) {
    for (Aggregator a : values()) {
      if (a.code == code) {
        return a;
      }
    }
    return null;
  }

  /** The state of a cell that has seen only {@code input} (what {@code AddToCell} writes). */
  public byte[] operand(long input) {
    if (this == HLL) {
      HyperLogLogPlusPlus<Long> h = new HyperLogLogPlusPlus.Builder().buildForLongs();
      h.add(input);
      return h.serializeToByteArray();
    }
    return ByteBuffer.allocate(INT64_BYTES).putLong(input).array();
  }

  /**
   * Why {@code state} is not a state of this aggregator (a {@code MergeToCell} input), or
   * null if it is one.
   */
  public String problem(byte[] state) {
    if (this != HLL) {
      return state.length == INT64_BYTES ? null
          : "is " + state.length + " bytes; an Int64 state is 8 bytes, big-endian";
    }
    try {
      HyperLogLogPlusPlus.forProto(state).result();
      return null;
    } catch (IllegalArgumentException e) {
      return "is not a HyperLogLog++ sketch of Int64 values (" + e.getMessage() + ")";
    }
  }

  /**
   * The fold of two states. Both were checked when written ({@link #problem}); a state
   * that is not one anyway (a cell written to the family's name before it was an aggregate
   * family, say) counts as nothing, so a read never fails on it.
   */
  public byte[] merge(byte[] a, byte[] b) {
    if (this == HLL) {
      return mergeSketches(a, b);
    }
    if (a.length != INT64_BYTES) {
      return b.length == INT64_BYTES ? b : operand(0);
    }
    if (b.length != INT64_BYTES) {
      return a;
    }
    long x = ByteBuffer.wrap(a).getLong();
    long y = ByteBuffer.wrap(b).getLong();
    long r = switch (this) {
      case SUM -> x + y;
      case MIN -> Math.min(x, y);
      case MAX -> Math.max(x, y);
      case HLL -> throw new AssertionError("sketches merge above");
    };
    return operand(r);
  }

  private static byte[] mergeSketches(byte[] a, byte[] b) {
    HyperLogLogPlusPlus<?> h;
    try {
      h = HyperLogLogPlusPlus.forProto(a);
    } catch (IllegalArgumentException e) {
      return b;
    }
    try {
      h.merge(b);
    } catch (IllegalArgumentException e) {
      return a;
    }
    return h.serializeToByteArray();
  }
}
