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
 *       precision 15 (about 0.6% standard error). An {@code AddToCell}'s operand is not a
 *       sketch but its input, {@code 0x00} and 8 bytes big-endian ({@link #operand}): folding
 *       it adds one value to the fold's sketch, where merging a sketch of one value costs as much
 *       as the fold's sketch is large. A sketch never starts with a zero byte (a protobuf field
 *       tag is never 0), and what a read or a compaction writes out is always a sketch.
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
  /** The first byte of an HLL operand that holds an input, not a sketch. */
  private static final byte HLL_INPUT = 0;

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

  /**
   * The operand an {@code AddToCell} of {@code input} writes: the state of a cell that has seen
   * only it, or for {@link #HLL} the input itself, marked (see the class comment).
   */
  public byte[] operand(long input) {
    if (this == HLL) {
      return ByteBuffer.allocate(1 + INT64_BYTES).put(HLL_INPUT).putLong(input).array();
    }
    return ByteBuffer.allocate(INT64_BYTES).putLong(input).array();
  }

  private static boolean isHllInput(byte[] operand) {
    return operand.length == 1 + INT64_BYTES && operand[0] == HLL_INPUT;
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
    if (state.length == 0) {
      return "is empty; a HyperLogLog++ state is a sketch (NULL, which merges nothing, is no input at all)";
    }
    try {
      // merged into an empty sketch of Int64 values, as a fold would: a sketch of strings fails here
      new HyperLogLogPlusPlus.Builder().buildForLongs().merge(state);
      return null;
    } catch (IllegalArgumentException e) {
      return "is not a HyperLogLog++ sketch of Int64 values (" + e.getMessage() + ")";
    }
  }

  /**
   * A fold that starts from {@code first} and takes more states with {@link Folder#add}: one
   * accumulator for many operands (a sketch is parsed once and written once, not at each step).
   */
  public Folder folder(byte[] first) {
    return new Folder(this, first);
  }

  /**
   * The fold of a cell's operands in progress. States that are not states of the aggregator
   * count as nothing, as in {@link #merge}. Not thread-safe: one reader or compaction owns it.
   */
  public static final class Folder {
    private final Aggregator aggregator;
    private final byte[] first;
    private int added;
    private long value;
    private boolean valid;
    private HyperLogLogPlusPlus<?> sketch;

    private Folder(Aggregator aggregator, byte[] first) {
      this.aggregator = aggregator;
      this.first = first;
    }

    /** Folds {@code state} in. */
    public void add(byte[] state) {
      if (added++ == 0) {
        take(first);
      }
      take(state);
    }

    @SuppressWarnings("unchecked")
    private void take(byte[] state) {
      if (aggregator == HLL) {
        if (isHllInput(state)) {
          if (sketch == null) {
            sketch = new HyperLogLogPlusPlus.Builder().buildForLongs();
          }
          try {
            ((HyperLogLogPlusPlus<Long>) sketch).add(ByteBuffer.wrap(state, 1, INT64_BYTES).getLong());
          } catch (IllegalArgumentException | ClassCastException e) {
            return; // the fold's sketch is not of Int64 values (a cell written before the family was one)
          }
          return;
        }
        try {
          if (sketch == null) {
            sketch = HyperLogLogPlusPlus.forProto(state);
          } else {
            sketch.merge(state);
          }
        } catch (IllegalArgumentException e) {
          return; // not a sketch of this family: counts as nothing
        }
        return;
      }
      if (state.length != INT64_BYTES) {
        return;
      }
      long x = ByteBuffer.wrap(state).getLong();
      value = !valid ? x : switch (aggregator) {
        case SUM -> value + x;
        case MIN -> Math.min(value, x);
        case MAX -> Math.max(value, x);
        case HLL -> throw new AssertionError("sketches fold above");
      };
      valid = true;
    }

    /** The fold so far, a state (for HLL always a sketch); {@code first} itself when nothing was added to it. */
    public byte[] result() {
      if (aggregator == HLL) {
        if (added == 0) {
          if (!isHllInput(first)) {
            return first;
          }
          take(first);
          added = 1;
        }
        return sketch == null ? first : sketch.serializeToByteArray();
      }
      if (added == 0) {
        return first;
      }
      return valid ? ByteBuffer.allocate(INT64_BYTES).putLong(value).array() : first;
    }
  }

  /**
   * The fold of two states. Both were checked when written ({@link #problem}); a state
   * that is not one anyway (a cell written to the family's name before it was an aggregate
   * family, say) counts as nothing, so a read never fails on it.
   */
  public byte[] merge(byte[] a, byte[] b) {
    Folder f = folder(a);
    f.add(b);
    return f.result();
  }
}
