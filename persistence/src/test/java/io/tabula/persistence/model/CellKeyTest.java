package io.tabula.persistence.model;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class CellKeyTest {
  private static byte[] b(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  @Test
  void tombstonesSortBeforeWhatTheyHide() {
    List<CellKey> expected = List.of(
        CellKey.of(b("r"), b(""), b(""), 0, 9, CellKind.DELETE_ROW),
        CellKey.of(b("r"), b("a"), b(""), 0, 3, CellKind.DELETE_FAMILY),
        CellKey.of(b("r"), b("a"), b(""), 0, 5, CellKind.DELETE_COLUMN),
        CellKey.put(b("r"), b("a"), b(""), 7, 1),
        CellKey.of(b("r"), b("a"), b("q"), 0, 4, CellKind.DELETE_COLUMN),
        CellKey.put(b("r"), b("a"), b("q"), 20, 2),
        CellKey.put(b("r"), b("a"), b("q"), 10, 8),
        CellKey.put(b("r"), b("a"), b("q"), 10, 6),
        CellKey.of(b("r"), b("b"), b(""), 0, 1, CellKind.DELETE_FAMILY),
        CellKey.put(b("r"), b("b"), b("\u0000"), 1, 1),
        CellKey.of(b("r\u0000"), b(""), b(""), 0, 1, CellKind.DELETE_ROW));
    List<CellKey> shuffled = new ArrayList<>(expected);
    java.util.Collections.shuffle(shuffled, new java.util.Random(7));
    shuffled.sort(CellKey.ORDER);
    assertEquals(expected, shuffled);
  }

  @Test
  void rowsCompareAsUnsignedBytes() {
    CellKey low = CellKey.put(new byte[] {0x7F}, b("f"), b("q"), 1, 1);
    CellKey high = CellKey.put(new byte[] {(byte) 0x80}, b("f"), b("q"), 1, 1);
    assertTrue(CellKey.compare(low, high) < 0);
  }

  /**
   * Keys compare rows by their first 16 bytes as two words before looking at the arrays; the
   * order must still be plain unsigned byte order, also for rows that are prefixes of each
   * other, end in zero bytes, differ only past byte 16, or have high bytes.
   */
  @Test
  void rowWordsKeepUnsignedByteOrder() {
    java.util.Random r = new java.util.Random(11);
    byte[] alphabet = {0, 1, 0x7F, (byte) 0x80, (byte) 0xFF};
    for (int i = 0; i < 200_000; i++) {
      byte[] x = randomRow(r, alphabet);
      byte[] y = r.nextInt(4) == 0 ? x.clone() : randomRow(r, alphabet);
      if (r.nextBoolean() && x.length > 0) {
        y = java.util.Arrays.copyOf(x, x.length + r.nextInt(3)); // x and a (zero-padded) extension
        if (y.length > x.length && r.nextBoolean()) {
          y[y.length - 1] = alphabet[r.nextInt(alphabet.length)];
        }
      }
      int expected = Integer.signum(java.util.Arrays.compareUnsigned(x, y));
      CellKey a = CellKey.put(x, b("f"), b("q"), 1, 1);
      CellKey c = CellKey.put(y, b("f"), b("q"), 1, 1);
      assertEquals(expected, Integer.signum(CellKey.compare(a, c)), () -> java.util.Arrays.toString(x) + " vs "
          + java.util.Arrays.toString(c.row()));
      assertEquals(-expected, Integer.signum(CellKey.compare(c, a)));
    }
  }

  private static byte[] randomRow(java.util.Random r, byte[] alphabet) {
    byte[] row = new byte[r.nextInt(24)];
    int shared = r.nextInt(row.length + 1); // a common prefix makes later bytes decide
    for (int i = 0; i < row.length; i++) {
      row[i] = i < shared ? (byte) 'k' : alphabet[r.nextInt(alphabet.length)];
    }
    return row;
  }

  @Test
  void rowMutationRefusesOversizedRowNamingTheField() {
    byte[] big = new byte[RowMutation.MAX_ROW_KEY_BYTES + 1];
    InvalidMutationException e = assertThrows(InvalidMutationException.class,
        () -> RowMutation.of(big, Mutation.DeleteFromRow.INSTANCE));
    assertEquals("row_key", e.field());
    assertTrue(e.getMessage().contains("65537"), e.getMessage());
    RowMutation.of(new byte[RowMutation.MAX_ROW_KEY_BYTES], Mutation.DeleteFromRow.INSTANCE);
  }

  @Test
  void rowMutationRefusesBadFieldsNamingThem() {
    assertEquals("row_key", assertThrows(InvalidMutationException.class,
        () -> RowMutation.of(new byte[0], Mutation.DeleteFromRow.INSTANCE)).field());
    assertEquals("mutations[0].timestamp_micros", assertThrows(InvalidMutationException.class,
        () -> RowMutation.of(b("r"), new Mutation.SetCell("f", b("q"), -5, b("v")))).field());
    assertEquals("mutations[1].family_name", assertThrows(InvalidMutationException.class,
        () -> RowMutation.of(b("r"), Mutation.DeleteFromRow.INSTANCE, new Mutation.DeleteFromFamily(""))).field());
    assertEquals("mutations[0].time_range", assertThrows(InvalidMutationException.class,
        () -> RowMutation.of(b("r"), new Mutation.DeleteFromColumn("f", b("q"), 10, 10))).field());
  }
}
