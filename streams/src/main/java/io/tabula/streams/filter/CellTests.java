package io.tabula.streams.filter;

import io.tabula.persistence.encoding.ByteArrays;
import java.util.function.Predicate;

/**
 * The per-cell tests behind {@link CellNodes.Matching}, built from already validated arguments.
 * Every test is stateless and thread-safe.
 */
final class CellTests {
  private CellTests() {}

  /**
   * One end of a byte-string range: {@code bytes == null} means unbounded, otherwise the bound
   * is {@code bytes}, inclusive if {@code closed}.
   */
  record Bound(byte[] bytes, boolean closed) {
    static final Bound UNBOUNDED = new Bound(null, true);
    static final Bound EMPTY_CLOSED = new Bound(ByteArrays.EMPTY, true);

    boolean admitsFromBelow(byte[] v) {
      if (bytes == null) {
        return true;
      }
      int c = ByteArrays.compare(v, bytes);
      return closed ? c >= 0 : c > 0;
    }

    boolean admitsFromAbove(byte[] v) {
      if (bytes == null) {
        return true;
      }
      int c = ByteArrays.compare(v, bytes);
      return closed ? c <= 0 : c < 0;
    }
  }

  static Predicate<LabeledCell> family(ByteRegex regex) {
    return c -> regex.matches(c.family());
  }

  static Predicate<LabeledCell> qualifier(ByteRegex regex) {
    return c -> regex.matches(c.qualifier());
  }

  static Predicate<LabeledCell> value(ByteRegex regex) {
    return c -> regex.matches(c.value());
  }

  /** Cells of {@code family} whose qualifier lies between the bounds. */
  static Predicate<LabeledCell> columnRange(String family, Bound start, Bound end) {
    return c -> c.family().equals(family)
        && start.admitsFromBelow(c.qualifier()) && end.admitsFromAbove(c.qualifier());
  }

  /** Timestamps in [start, end); {@code end == 0} means no upper bound. */
  static Predicate<LabeledCell> timestampRange(long start, long end) {
    return c -> c.timestamp() >= start && (end == 0 || c.timestamp() < end);
  }

  static Predicate<LabeledCell> valueRange(Bound start, Bound end) {
    return c -> start.admitsFromBelow(c.value()) && end.admitsFromAbove(c.value());
  }

  /** Values as long as {@code mask} with every mask bit set: {@code (value & mask) == mask}. */
  static Predicate<LabeledCell> valueBitmask(byte[] mask) {
    return c -> {
      byte[] v = c.value();
      if (v.length != mask.length) {
        return false;
      }
      for (int i = 0; i < v.length; i++) {
        if ((v[i] & mask[i]) != mask[i]) {
          return false;
        }
      }
      return true;
    };
  }
}
