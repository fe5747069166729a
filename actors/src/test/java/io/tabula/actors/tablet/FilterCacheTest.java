package io.tabula.actors.tablet;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.bigtable.v2.RowFilter;
import com.google.protobuf.ByteString;
import io.tabula.streams.filter.CompiledFilter;
import io.tabula.streams.filter.InvalidFilterException;
import org.junit.jupiter.api.Test;

/** The compiled filters kept are bounded by what they weigh, so large regexes cannot pile up. */
class FilterCacheTest {
  private static byte[] valueRegex(String pattern) {
    return RowFilter.newBuilder().setValueRegexFilter(ByteString.copyFromUtf8(pattern)).build().toByteArray();
  }

  @Test
  void largeFiltersAreKeptOnlyWithinTheWeight() {
    long max = 64L << 20;
    FilterCache cache = new FilterCache(max);
    for (int i = 0; i < 40; i++) {
      // about 50,000 instructions each: 12.8 MB by the cache's reckoning
      cache.compile(valueRegex(".{0,1000}".repeat(24) + "x{" + i + "}"));
    }
    long[] now = cache.weightAndCount();
    assertTrue(now[0] <= max, "weighs " + now[0]);
    assertTrue(now[1] <= 5, "keeps " + now[1] + " filters at the regex budget");
  }

  @Test
  void smallFiltersAreKeptByTheThousand() {
    FilterCache cache = new FilterCache(64L << 20);
    for (int i = 0; i < 2000; i++) {
      cache.compile(valueRegex("v" + i));
    }
    assertEquals(2000, cache.weightAndCount()[1]);
    byte[] again = valueRegex("v7");
    CompiledFilter first = cache.compile(again);
    assertSame(first, cache.compile(again.clone()));
  }

  @Test
  void aBadFilterIsRefusedAndNotKept() {
    FilterCache cache = new FilterCache(64L << 20);
    InvalidFilterException e = assertThrows(InvalidFilterException.class,
        () -> cache.compile(valueRegex("((a{1000}){1000}){1000}")));
    assertEquals("filter.value_regex_filter", e.field());
    assertEquals(0, cache.weightAndCount()[1]);
  }
}
