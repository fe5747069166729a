package io.tabula.actors.master;

import java.nio.charset.StandardCharsets;
import java.util.Collection;
import java.util.List;
import java.util.Map;

/**
 * A content digest of a {@link Directory}, kept as it changes, so that two copies at the same
 * version can be compared without sending either: the master's change carries the digest of
 * the directory it makes, and a node whose copy made that version from the events checks that
 * it has the same digest (docs/cluster.md, "How the directory travels").
 *
 * <p>The digest is a sum, modulo 2^64, of one 64-bit hash per entry (each table, each tablet,
 * each placement) and of the next tablet number. A sum is the same whatever order the entries
 * are visited in, and a change updates it by taking out the hashes of the entries it replaces
 * and adding those of their replacements: work in proportion to the change. Each entry's hash
 * reads only the entry's content (strings, bytes, numbers, in a fixed order), never an object's
 * identity or a hash map's order, so every JVM of one build computes the same one (a table's
 * entry is hashed from its text, which a new field would change: all nodes of a cluster run one
 * version of Tabula). Not a cryptographic
 * hash: it finds a copy that a bug made different, not a forged one. Stateless.
 */
final class DirectoryDigest {
  private DirectoryDigest() {}

  private static final long TABLE = 0x7461626c65L;
  private static final long TABLET = 0x7461626c6574L;
  private static final long PLACED = 0x706c61636564L;
  private static final long NEXT = 0x6e657874L;

  /** The part of the digest that {@code nextTabletNumber} adds. */
  static long next(long nextTabletNumber) {
    return mix(NEXT ^ mix(nextTabletNumber));
  }

  /** The hash of table {@code t}'s entry; 0 for none. */
  static long table(TableInfo t) {
    if (t == null) {
      return 0;
    }
    // Its families, groups and group names are in TreeMaps and its policies and groups are
    // records of numbers, strings, enums and lists: its text is the same in every JVM.
    return mix(TABLE ^ string(t.toString()));
  }

  /** The hash of tablet {@code t}'s entry; 0 for none. */
  static long tablet(TabletInfo t) {
    if (t == null) {
      return 0;
    }
    long h = TABLET;
    h = step(h, string(t.table()));
    h = step(h, string(t.id()));
    h = step(h, bytes(t.startRow()));
    h = step(h, bytes(t.endRow()));
    for (Map.Entry<String, List<String>> group : t.files().entrySet()) { // a TreeMap: in key order
      h = step(h, string(group.getKey()));
      h = step(h, strings(group.getValue()));
    }
    return mix(step(h, t.redoPoint()));
  }

  /** The hash of tablet {@code id}'s placement {@code p}; 0 for none. */
  static long placement(String id, TabletPlacement p) {
    if (p == null) {
      return 0;
    }
    long h = PLACED;
    h = step(h, string(id));
    h = step(h, string(p.owner()));
    h = step(h, string(p.state().name()));
    h = step(h, string(p.peer()));
    return mix(step(h, strings(p.logs())));
  }

  /** The sum of the hashes of the tablets in {@code ts}. */
  static long tablets(Collection<TabletInfo> ts) {
    long sum = 0;
    for (TabletInfo t : ts) {
      sum += tablet(t);
    }
    return sum;
  }

  private static long strings(List<String> l) {
    long h = l.size();
    for (String s : l) {
      h = step(h, string(s));
    }
    return h;
  }

  private static long string(String s) {
    return s == null ? 0x6e756c6cL : bytes(s.getBytes(StandardCharsets.UTF_8));
  }

  /** FNV-1a over the bytes, then the length, mixed. */
  private static long bytes(byte[] b) {
    long h = 0xcbf29ce484222325L;
    for (byte x : b) {
      h = (h ^ (x & 0xff)) * 0x100000001b3L;
    }
    return mix(h ^ b.length);
  }

  private static long step(long h, long v) {
    return mix(h * 31 + v);
  }

  /** MurmurHash3's 64-bit finalizer: every bit of the input moves about half the output's. */
  private static long mix(long z) {
    z = (z ^ (z >>> 33)) * 0xff51afd7ed558ccdL;
    z = (z ^ (z >>> 33)) * 0xc4ceb53a185ec5c3L;
    return z ^ (z >>> 33);
  }
}
