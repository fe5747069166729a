package io.tabula.streams.filter;

import io.tabula.persistence.encoding.ByteArrays;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;

/**
 * Row order for filter output: family name, then qualifier as unsigned bytes, then timestamp
 * descending, the order engine rows arrive in. Family names are restricted to
 * {@code [-_.a-zA-Z0-9]+}, so comparing them as strings equals comparing their bytes.
 */
final class CellOrder {
  static final Comparator<LabeledCell> ORDER = (a, b) -> {
    int c = a.family().compareTo(b.family());
    if (c != 0) {
      return c;
    }
    c = ByteArrays.compare(a.qualifier(), b.qualifier());
    return c != 0 ? c : Long.compare(b.timestamp(), a.timestamp());
  };

  private CellOrder() {}

  /** True if {@code a} and {@code b} are versions of the same column. */
  static boolean sameColumn(LabeledCell a, LabeledCell b) {
    return a.family().equals(b.family()) && Arrays.equals(a.qualifier(), b.qualifier());
  }

  /**
   * Merges lists that are each in row order into one list in row order, keeping duplicates.
   * The sort is stable: cells equal in order keep the order of the lists they came from.
   */
  static List<LabeledCell> merge(List<List<LabeledCell>> parts) {
    List<LabeledCell> only = null;
    int size = 0;
    int nonEmpty = 0;
    for (List<LabeledCell> part : parts) {
      if (!part.isEmpty()) {
        only = part;
        size += part.size();
        nonEmpty++;
      }
    }
    if (nonEmpty == 0) {
      return List.of();
    }
    if (nonEmpty == 1) {
      return only;
    }
    List<LabeledCell> out = new ArrayList<>(size);
    for (List<LabeledCell> part : parts) {
      out.addAll(part);
    }
    out.sort(ORDER);
    return out;
  }
}
