package io.tabula.streams.filter;

import static io.tabula.streams.filter.Fixtures.*;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.bigtable.v2.RowFilter;
import com.google.protobuf.ByteString;
import io.tabula.persistence.model.Cell;
import io.tabula.persistence.model.Row;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Regexes over raw bytes: full match, {@code \C}, newlines, binary and UTF-8 content. */
class ByteRegexTest {
  private static ByteRegex re(String pattern) {
    return ByteRegex.compile(b(pattern), "f");
  }

  @Test
  void fullMatchNotSearch() {
    assertTrue(re("abc").matches(b("abc")));
    assertFalse(re("b").matches(b("abc")));
    assertFalse(re("a|ab").matches(b("abc")));
    assertTrue(re("a|abc").matches(b("abc")));
  }

  @Test
  void dotSkipsNewlineButBackslashCMatchesAnyByte() {
    byte[] withNewline = {'a', '\n', 'b'};
    assertFalse(re("a.b").matches(withNewline));
    assertTrue(re("a\\Cb").matches(withNewline));
    assertTrue(re("\\C*").matches(new byte[] {0, (byte) 0xFF, '\n', (byte) 0x80}));
    assertTrue(re("(?s)a.b").matches(withNewline));
  }

  @Test
  void backslashCRewriteRespectsEscapesQuotesAndClasses() {
    assertEquals("(?s:.)", ByteRegex.rewriteAnyByte("\\C"));
    assertEquals("\\\\C", ByteRegex.rewriteAnyByte("\\\\C"));
    assertEquals("\\Q\\C\\E(?s:.)", ByteRegex.rewriteAnyByte("\\Q\\C\\E\\C"));
    assertEquals("[\\]](?s:.)", ByteRegex.rewriteAnyByte("[\\]]\\C"));
    assertEquals("[]\\C](?s:.)", ByteRegex.rewriteAnyByte("[]\\C]\\C"));
    assertEquals("[[:alpha:]\\C]", ByteRegex.rewriteAnyByte("[[:alpha:]\\C]"));
    assertTrue(re("\\\\C").matches(b("\\C")));
    assertTrue(re("\\Qa\\C\\E").matches(b("a\\C")));
  }

  @Test
  void binaryBytesMatchAsLatin1Characters() {
    byte[] key = {0x00, (byte) 0xFF, (byte) 0x80, 0x41};
    assertTrue(re("\\x00\\xff\\x80A").matches(key));
    assertTrue(re("\\x00[\\x80-\\xff]+A").matches(key));
    assertFalse(re("\\x00.A").matches(key));
    assertTrue(re("\\x00..A").matches(key));
  }

  @Test
  void utf8InThePatternMatchesTheSameBytes() {
    assertTrue(re("caf\u00e9").matches(b("caf\u00e9")));
    // é is two bytes, so '.' does not cover it but '..' does
    assertFalse(re("caf.").matches(b("caf\u00e9")));
    assertTrue(re("caf..").matches(b("caf\u00e9")));
  }

  @Test
  void familyNamesMatchAsTheirUtf8Bytes() {
    assertTrue(re("f1").matches("f1"));
    assertTrue(re("[a-z]+\\.x").matches("abc.x"));
    assertFalse(re("f.").matches("f\n"));
    assertTrue(re("f\\C").matches("f\n"));
    // Not a name the schema accepts, but a non-ASCII string is still matched byte by byte
    assertFalse(re("caf.").matches("caf\u00e9"));
    assertTrue(re("caf..").matches("caf\u00e9"));
    assertTrue(re("caf\u00e9").matches("caf\u00e9"));
  }

  @Test
  void rowKeyFilterOverBinaryKey() {
    byte[] key = {(byte) 0xFE, '\n', 0x00};
    Row row = new Row(key, List.of(new Cell("f", b("q"), 1, b("v"))));
    RowFilter dot = RowFilter.newBuilder().setRowKeyRegexFilter(ByteString.copyFrom(new byte[] {
        '\\', 'x', 'f', 'e', '.', '\\', 'x', '0', '0'})).build();
    assertTrue(RowFilters.compile(dot).apply(row).isEmpty());
    RowFilter any = RowFilter.newBuilder().setRowKeyRegexFilter(ByteString.copyFrom(new byte[] {
        (byte) 0xFE, '\\', 'C', '\\', 'x', '0', '0'})).build();
    assertEquals(1, RowFilters.compile(any).apply(row).cells().size());
  }

  @Test
  void qualifierAndValueFiltersOverBinaryBytes() {
    Row row = new Row(b("k"), List.of(
        new Cell("f", new byte[] {(byte) 0xC3, (byte) 0xA9}, 1, new byte[] {(byte) 0x90, 0x01}),
        new Cell("f", new byte[] {(byte) 0xC3}, 1, new byte[] {(byte) 0x90})));
    RowFilter q = RowFilter.newBuilder().setColumnQualifierRegexFilter(ByteString.copyFrom(new byte[] {
        (byte) 0xC3, (byte) 0xA9})).build();
    assertEquals(1, RowFilters.compile(q).apply(row).cells().size());
    RowFilter v = RowFilter.newBuilder().setValueRegexFilter(ByteString.copyFromUtf8("\\x90\\C?")).build();
    assertEquals(2, RowFilters.compile(v).apply(row).cells().size());
  }

  @Test
  void aMatchThatTakesTooLongGivesUpNamingTheField() {
    // 2002 instructions, all alive at every byte of a run of a's: about 25 ms per KiB here.
    ByteRegex slow = ByteRegex.compile("(?:a*){1000}b".getBytes(java.nio.charset.StandardCharsets.ISO_8859_1),
        "filter.value_regex_filter");
    byte[] subject = "a".repeat(1 << 20).getBytes(java.nio.charset.StandardCharsets.ISO_8859_1);
    long started = System.nanoTime();
    FilterTooSlowException e = org.junit.jupiter.api.Assertions.assertThrows(FilterTooSlowException.class,
        () -> slow.matches(subject, 200_000_000L));
    long millis = (System.nanoTime() - started) / 1_000_000;
    assertEquals("filter.value_regex_filter", e.field());
    assertTrue(e.getMessage().contains("1048576 bytes"), e.getMessage());
    assertTrue(millis < 5_000, "gave up after " + millis + " ms");
    // The same pattern on a short subject answers as usual.
    assertTrue(slow.matches("aaab".getBytes(java.nio.charset.StandardCharsets.ISO_8859_1), 200_000_000L));
    assertFalse(slow.matches("aaa".getBytes(java.nio.charset.StandardCharsets.ISO_8859_1), 200_000_000L));
  }
}
