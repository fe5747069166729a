package io.tabula.actors.tablet;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.google.bigtable.v2.RowFilter;
import com.google.protobuf.InvalidProtocolBufferException;
import io.tabula.streams.filter.CompiledFilter;
import io.tabula.streams.filter.InvalidFilterException;
import io.tabula.streams.filter.RowFilters;
import java.nio.ByteBuffer;

/**
 * The compiled forms of the last few serialized filters the node's tablets were sent:
 * clients tend to send the same few filters again and again, and compiling means parsing the
 * message and every regex in it. A compiled filter is immutable, so one is shared by every
 * read that uses it. Thread-safe.
 */
final class FilterCache {
  private final Cache<ByteBuffer, CompiledFilter> compiled;

  FilterCache(int kept) {
    this.compiled = Caffeine.newBuilder().maximumSize(kept).build();
  }

  /** The compiled filter; an empty array passes every cell. InvalidFilterException if it is not a valid filter. */
  CompiledFilter compile(byte[] filter) {
    return compiled.get(ByteBuffer.wrap(filter), k -> compileNow(filter));
  }

  private static CompiledFilter compileNow(byte[] filter) {
    try {
      return RowFilters.compile(RowFilter.parseFrom(filter));
    } catch (InvalidProtocolBufferException e) {
      throw new InvalidFilterException("filter", "is not a valid RowFilter message: " + e.getMessage());
    }
  }
}
