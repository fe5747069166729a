package io.tabula.persistence.model;

import io.tabula.persistence.encoding.ByteArrays;
import java.util.Arrays;
import java.util.Comparator;

/**
 * The internal key of one entry in a memtable or SSTable: (row, family, qualifier,
 * timestamp, sequence, kind).
 *
 * <p>Order ({@link #ORDER}), chosen so a single forward pass meets every tombstone before
 * the cells it may hide:
 *
 * <ol>
 *   <li>row, unsigned bytes ascending;
 *   <li>a {@link CellKind#DELETE_ROW} tombstone before every other entry of its row;
 *   <li>family, unsigned bytes ascending;
 *   <li>a {@link CellKind#DELETE_FAMILY} tombstone before every column of its family;
 *   <li>qualifier, unsigned bytes ascending;
 *   <li>{@link CellKind#DELETE_COLUMN} tombstones before the versions of their column;
 *   <li>timestamp descending (newest version first);
 *   <li>sequence descending (the latest write of the same timestamp first).
 * </ol>
 *
 * A tombstone hides the entries it covers whose sequence is lower than its own. Tombstones
 * carry an empty family/qualifier where the kind makes them irrelevant, and timestamp 0.
 *
 * <p>Immutable once built: callers must not modify the arrays they pass in or read out.
 */
public final class CellKey {
  /** The sort order of entries; see the class comment. */
  public static final Comparator<CellKey> ORDER = CellKey::compare;

  private final byte[] row;
  private final byte[] family;
  private final byte[] qualifier;
  private final long timestamp;
  private final long sequence;
  private final CellKind kind;
  /**
   * The row's first 16 bytes as two unsigned big-endian words, zero-padded. Two keys whose
   * words differ are ordered by them without reading the row arrays: in a large memtable
   * the tree's comparisons otherwise miss the cache once more for each row array.
   */
  private final long rowWord0;
  private final long rowWord1;

  private CellKey(byte[] row, byte[] family, byte[] qualifier, long timestamp, long sequence, CellKind kind) {
    this.row = row;
    this.rowWord0 = ByteArrays.word(row, 0);
    this.rowWord1 = ByteArrays.word(row, 8);
    this.family = family;
    this.qualifier = qualifier;
    this.timestamp = timestamp;
    this.sequence = sequence;
    this.kind = kind;
  }

  public static CellKey of(byte[] row, byte[] family, byte[] qualifier, long timestamp, long sequence, CellKind kind) {
    return switch (kind) {
      case DELETE_ROW -> new CellKey(row, ByteArrays.EMPTY, ByteArrays.EMPTY, 0, sequence, kind);
      case DELETE_FAMILY -> new CellKey(row, family, ByteArrays.EMPTY, 0, sequence, kind);
      case DELETE_COLUMN -> new CellKey(row, family, qualifier, 0, sequence, kind);
      case PUT, MERGE -> new CellKey(row, family, qualifier, timestamp, sequence, kind);
      case TOKEN -> new CellKey(row, ByteArrays.EMPTY, qualifier, timestamp, sequence, kind);
    };
  }

  public static CellKey put(byte[] row, byte[] family, byte[] qualifier, long timestamp, long sequence) {
    return new CellKey(row, family, qualifier, timestamp, sequence, CellKind.PUT);
  }

  /** The smallest key of {@code row}: a seek target that lands on the row's first entry. */
  public static CellKey firstOfRow(byte[] row) {
    return new CellKey(row, ByteArrays.EMPTY, ByteArrays.EMPTY, 0, Long.MAX_VALUE, CellKind.DELETE_ROW);
  }

  /** The smallest key of a family within a row. */
  public static CellKey firstOfFamily(byte[] row, byte[] family) {
    return new CellKey(row, family, ByteArrays.EMPTY, 0, Long.MAX_VALUE, CellKind.DELETE_FAMILY);
  }

  /**
   * The smallest key of idempotency token {@code token} in {@code row}: a seek target that
   * lands on its newest entry if the row has one (no family is empty, so nothing else sorts
   * among the tokens).
   */
  public static CellKey firstOfToken(byte[] row, byte[] token) {
    return new CellKey(row, ByteArrays.EMPTY, token, Long.MAX_VALUE, Long.MAX_VALUE, CellKind.TOKEN);
  }

  /** The smallest key of a column within a row. */
  public static CellKey firstOfColumn(byte[] row, byte[] family, byte[] qualifier) {
    return new CellKey(row, family, qualifier, 0, Long.MAX_VALUE, CellKind.DELETE_COLUMN);
  }

  public byte[] row() {
    return row;
  }

  public byte[] family() {
    return family;
  }

  public byte[] qualifier() {
    return qualifier;
  }

  /** The row's bytes 0 to 8 as an unsigned big-endian word, zero-padded (see {@link ByteArrays#word}). */
  public long rowWord0() {
    return rowWord0;
  }

  /** The row's bytes 8 to 16 as an unsigned big-endian word, zero-padded. */
  public long rowWord1() {
    return rowWord1;
  }

  public long timestamp() {
    return timestamp;
  }

  public long sequence() {
    return sequence;
  }

  public CellKind kind() {
    return kind;
  }

  /** Approximate bytes this key holds, for memtable accounting. */
  public int weight() {
    return row.length + family.length + qualifier.length + 48;
  }

  public boolean sameRow(CellKey o) {
    return Arrays.equals(row, o.row);
  }

  public boolean sameColumn(CellKey o) {
    return Arrays.equals(row, o.row) && Arrays.equals(family, o.family) && Arrays.equals(qualifier, o.qualifier);
  }

  private static int familyRank(CellKind k) {
    return k == CellKind.DELETE_ROW ? 0 : 1;
  }

  private static int qualifierRank(CellKind k) {
    return k == CellKind.DELETE_FAMILY ? 0 : 1;
  }

  private static int versionRank(CellKind k) {
    return k == CellKind.DELETE_COLUMN ? 0 : 1;
  }

  public static int compare(CellKey a, CellKey b) {
    if (a.rowWord0 != b.rowWord0) {
      return Long.compareUnsigned(a.rowWord0, b.rowWord0);
    }
    if (a.rowWord1 != b.rowWord1) {
      return Long.compareUnsigned(a.rowWord1, b.rowWord1);
    }
    return compare(a.row, 0, a.row.length, a.kind, a.family, 0, a.family.length, a.qualifier, 0, a.qualifier.length,
        a.timestamp, a.sequence, b);
  }

  /**
   * Compares a key given as slices of arrays (an encoded key in an SSTable block, read in
   * place) with {@code b}, in {@link #ORDER}, without building a {@link CellKey}.
   */
  public static int compare(byte[] row, int rowOff, int rowLen, CellKind kind, byte[] fam, int famOff, int famLen,
      byte[] qual, int qualOff, int qualLen, long timestamp, long sequence, CellKey b) {
    int c = same(row, rowOff, rowLen, b.row) ? 0 : Arrays.compareUnsigned(row, rowOff, rowOff + rowLen, b.row, 0,
        b.row.length);
    if (c != 0) {
      return c;
    }
    c = Integer.compare(familyRank(kind), familyRank(b.kind));
    if (c != 0) {
      return c;
    }
    c = same(fam, famOff, famLen, b.family) ? 0
        : Arrays.compareUnsigned(fam, famOff, famOff + famLen, b.family, 0, b.family.length);
    if (c != 0) {
      return c;
    }
    c = Integer.compare(qualifierRank(kind), qualifierRank(b.kind));
    if (c != 0) {
      return c;
    }
    c = same(qual, qualOff, qualLen, b.qualifier) ? 0
        : Arrays.compareUnsigned(qual, qualOff, qualOff + qualLen, b.qualifier, 0, b.qualifier.length);
    if (c != 0) {
      return c;
    }
    c = Integer.compare(versionRank(kind), versionRank(b.kind));
    if (c != 0) {
      return c;
    }
    c = Long.compare(b.timestamp, timestamp);
    if (c != 0) {
      return c;
    }
    return Long.compare(b.sequence, sequence);
  }

  /** Whether the slice is the whole of {@code whole} (decoded keys often share their arrays). */
  private static boolean same(byte[] slice, int off, int len, byte[] whole) {
    return slice == whole && off == 0 && len == whole.length;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof CellKey k && compare(this, k) == 0 && kind == k.kind;
  }

  @Override
  public int hashCode() {
    int h = Arrays.hashCode(row);
    h = 31 * h + Arrays.hashCode(family);
    h = 31 * h + Arrays.hashCode(qualifier);
    h = 31 * h + Long.hashCode(timestamp);
    return 31 * h + Long.hashCode(sequence);
  }

  @Override
  public String toString() {
    return kind + "(" + ByteArrays.show(row) + ", " + ByteArrays.show(family) + ":" + ByteArrays.show(qualifier)
        + ", ts=" + timestamp + ", seq=" + sequence + ")";
  }
}
