package io.tabula.persistence.encoding;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.tabula.persistence.model.CellKey;
import io.tabula.persistence.model.CellKind;
import java.util.HexFormat;
import org.junit.jupiter.api.Test;

class CellKeyCodecTest {
  @Test
  void encodesFieldsInDocumentedOrder() {
    CellKey k = CellKey.put(ByteArrays.utf8("r"), ByteArrays.utf8("cf"), ByteArrays.utf8("q"), 0x0102, 7);
    assertEquals("0172" + "01" + "02" + "6366" + "0171" + "0000000000000102" + "0000000000000007",
        HexFormat.of().formatHex(CellKeyCodec.encode(k)));
  }

  @Test
  void roundTripsEveryKind() {
    for (CellKind kind : CellKind.values()) {
      CellKey k = CellKey.of(ByteArrays.utf8("row"), ByteArrays.utf8("fam"), new byte[] {0, (byte) 0xFF}, 99,
          Long.MAX_VALUE, kind);
      byte[] enc = CellKeyCodec.encode(k);
      assertEquals(CellKeyCodec.encodedSize(k), enc.length);
      CellKey back = CellKeyCodec.decode(enc);
      assertEquals(k, back);
      assertEquals(kind, back.kind());
      assertArrayEquals(enc, CellKeyCodec.encode(back));
    }
  }

  @Test
  void refusesMalformedKeys() {
    byte[] enc = CellKeyCodec.encode(CellKey.put(ByteArrays.utf8("r"), ByteArrays.utf8("f"), ByteArrays.EMPTY, 1, 1));
    assertThrows(IllegalArgumentException.class, () -> CellKeyCodec.decode(enc, 0, enc.length - 1));
    byte[] badKind = enc.clone();
    badKind[2] = 9;
    assertThrows(IllegalArgumentException.class, () -> CellKeyCodec.decode(badKind));
    byte[] rowTombstoneWithFamily = enc.clone();
    rowTombstoneWithFamily[2] = (byte) CellKind.DELETE_ROW.code();
    assertThrows(IllegalArgumentException.class, () -> CellKeyCodec.decode(rowTombstoneWithFamily));
    byte[] longRow = enc.clone();
    longRow[0] = 100;
    assertThrows(IllegalArgumentException.class, () -> CellKeyCodec.decode(longRow));
  }
}
