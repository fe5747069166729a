package io.tabula.client;

import static io.tabula.client.Fixtures.bytes;
import static io.tabula.client.Fixtures.utf8;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.bigtable.v2.RowFilter;
import com.google.protobuf.ByteString;
import java.nio.charset.StandardCharsets;
import java.util.Random;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * {@link Filter#quote} and the exact-match factories built on it. The quoted patterns are
 * also compiled with java.util.regex over the bytes read as Latin-1 (one byte, one
 * character, as the node's RE2 matching does) to check that they match the bytes and
 * nothing else.
 */
class FilterTest {
  @Test
  void lettersDigitsAndUnderscoreStayAsTheyAre() {
    assertEquals("abcXYZ019_", quoted(utf8("abcXYZ019_")));
    assertEquals("", quoted(ByteString.EMPTY));
  }

  @Test
  void regexMetacharactersAreEscaped() {
    assertEquals("a\\.b\\*c", quoted(utf8("a.b*c")));
    assertEquals("\\.\\[\\]\\{\\}\\(\\)\\*\\+\\?\\^\\$\\|\\\\", quoted(utf8(".[]{}()*+?^$|\\")));
    assertEquals("\\ \\-\\:\\/\\#", quoted(utf8(" -:/#")));
  }

  @Test
  void nonAsciiAndControlBytesBecomeHexEscapes() {
    assertEquals("caf\\xc3\\xa9", quoted(utf8("café")), "é is the two UTF-8 bytes c3 a9");
    assertEquals("\\x00\\x0a\\x1f\\x7f\\x80\\xff", quoted(bytes(0x00, 0x0a, 0x1f, 0x7f, 0x80, 0xff)));
  }

  @Test
  void aQuotedPatternMatchesExactlyItsBytes() {
    long seed = Fixtures.seed(FilterTest.class);
    Random random = new Random(seed);
    for (int i = 0; i < 2_000; i++) {
      byte[] b = new byte[1 + random.nextInt(12)];
      random.nextBytes(b);
      ByteString subject = ByteString.copyFrom(b);
      Pattern p = Pattern.compile(latin1(Filter.quote(subject)));
      assertTrue(p.matcher(latin1(subject)).matches(), "quote of " + hex(subject) + " does not match it");

      byte[] changed = b.clone();
      int at = random.nextInt(changed.length);
      changed[at] = (byte) (changed[at] + 1 + random.nextInt(255));
      assertFalse(p.matcher(latin1(ByteString.copyFrom(changed))).matches(),
          "quote of " + hex(subject) + " also matches " + hex(ByteString.copyFrom(changed)));
      assertFalse(p.matcher(latin1(subject.concat(bytes(random.nextInt(256))))).matches(),
          "quote of " + hex(subject) + " matches a longer subject");
    }
  }

  @Test
  void metacharactersDoNotActAsOperators() {
    Pattern p = Pattern.compile(latin1(Filter.quote(utf8("a.b*"))));
    assertTrue(p.matcher("a.b*").matches());
    assertFalse(p.matcher("aXb").matches(), "'.' must not match any character");
    assertFalse(p.matcher("a.bbb").matches(), "'*' must not repeat");
  }

  @Test
  void exactMatchFactoriesQuoteTheirArguments() {
    assertEquals("fam\\-1", Filter.family("fam-1").toProto().getFamilyNameRegexFilter());
    RowFilter column = Filter.column("f", "q.1").toProto();
    assertEquals("f", column.getChain().getFilters(0).getFamilyNameRegexFilter());
    assertEquals(utf8("q\\.1"), column.getChain().getFilters(1).getColumnQualifierRegexFilter());
    assertEquals(utf8("\\x00v\\+"), Filter.valueEquals(bytes(0, 'v', '+')).toProto().getValueRegexFilter());
  }

  @Test
  void aChainOrInterleaveOfOneIsThatFilter() {
    Filter f = Filter.label("x");
    assertEquals(f, Filter.chain(f));
    assertEquals(f, Filter.interleave(f));
    assertEquals(RowFilter.FilterCase.CHAIN, Filter.chain(f, Filter.pass()).toProto().getFilterCase());
    assertEquals(RowFilter.FilterCase.INTERLEAVE, Filter.interleave(f, Filter.pass()).toProto().getFilterCase());
  }

  private static String quoted(ByteString b) {
    return Filter.quote(b).toStringUtf8();
  }

  private static String latin1(ByteString b) {
    return new String(b.toByteArray(), StandardCharsets.ISO_8859_1);
  }

  private static String hex(ByteString b) {
    StringBuilder s = new StringBuilder();
    for (int i = 0; i < b.size(); i++) {
      s.append(String.format("%02x", b.byteAt(i) & 0xff));
    }
    return s.toString();
  }
}
