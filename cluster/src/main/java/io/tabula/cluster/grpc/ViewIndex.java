package io.tabula.cluster.grpc;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import io.tabula.actors.master.ViewInfo;
import io.tabula.persistence.encoding.ByteArrays;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * An authorized view's rows and columns as sorted lookups, so that what a request touches is
 * checked in time logarithmic in the view's size: its row prefixes without those that a
 * shorter one covers (so the prefix that could hold a key is the greatest one not after it),
 * and per family its qualifiers as a set and its qualifier prefixes likewise reduced. Made
 * once per view definition (a view changed is a new {@link ViewInfo}) and kept in a small
 * cache by identity. Immutable and thread-safe.
 */
final class ViewIndex {
  private static final Cache<ViewInfo, ViewIndex> INDEXES = Caffeine.newBuilder().weakKeys().maximumSize(1_000)
      .build();

  private final TreeSet<String> prefixes;
  private final byte[][] starts;
  private final byte[][] ends;
  private final Map<String, Set<String>> qualifiers = new HashMap<>();
  private final Map<String, TreeSet<String>> qualifierPrefixes = new HashMap<>();

  private ViewIndex(ViewInfo v) {
    this.prefixes = reduced(v.rowPrefixes());
    List<String> sorted = new ArrayList<>(prefixes);
    this.starts = new byte[sorted.size()][];
    this.ends = new byte[sorted.size()][];
    for (int i = 0; i < sorted.size(); i++) {
      starts[i] = sorted.get(i).getBytes(StandardCharsets.ISO_8859_1);
      byte[] end = ByteArrays.prefixEnd(starts[i]);
      ends[i] = end == null ? new byte[0] : end; // "" or all 0xFF: to the end of the table
    }
    v.families().forEach((family, subset) -> {
      qualifiers.put(family, new HashSet<>(subset.qualifiers()));
      qualifierPrefixes.put(family, reduced(subset.qualifierPrefixes()));
    });
  }

  static ViewIndex of(ViewInfo v) {
    return INDEXES.get(v, ViewIndex::new);
  }

  /** {@code keys} sorted, without any that another of them begins. */
  private static TreeSet<String> reduced(List<String> keys) {
    TreeSet<String> out = new TreeSet<>();
    for (String k : new TreeSet<>(keys)) { // ISO-8859-1 strings sort as their bytes
      String before = out.floor(k);
      if (before == null || !k.startsWith(before)) {
        out.add(k);
      }
    }
    return out;
  }

  boolean everyRow() {
    return prefixes.isEmpty();
  }

  /** Whether row {@code key} (ISO-8859-1) is in the view. */
  boolean hasRow(String key) {
    if (prefixes.isEmpty()) {
      return true;
    }
    String p = prefixes.floor(key);
    return p != null && key.startsWith(p);
  }

  /** Whether column {@code family}:{@code qualifier} (ISO-8859-1) is in the view. */
  boolean hasColumn(String family, String qualifier) {
    Set<String> exact = qualifiers.get(family);
    if (exact == null) {
      return false;
    }
    if (exact.contains(qualifier)) {
      return true;
    }
    String p = qualifierPrefixes.get(family).floor(qualifier);
    return p != null && qualifier.startsWith(p);
  }

  int prefixCount() {
    return starts.length;
  }

  byte[] prefixStart(int i) {
    return starts[i];
  }

  /** Where prefix {@code i}'s rows end (exclusive); empty: the table's end. */
  byte[] prefixEnd(int i) {
    return ends[i];
  }

  /** The first prefix whose rows may hold {@code key} or come after it. */
  int firstOverlapping(byte[] key) {
    int lo = 0;
    int hi = starts.length; // the last prefix starting at or before key, if any
    while (lo < hi) {
      int mid = (lo + hi) >>> 1;
      if (ByteArrays.compare(starts[mid], key) <= 0) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    return Math.max(0, lo - 1);
  }
}
