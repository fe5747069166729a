package io.tabula.actors.tablet;

import com.google.bigtable.v2.RowFilter;
import com.google.protobuf.InvalidProtocolBufferException;
import io.tabula.streams.filter.CompiledFilter;
import io.tabula.streams.filter.InvalidFilterException;
import io.tabula.streams.filter.RowFilters;
import java.nio.ByteBuffer;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The compiled forms of the last few serialized filters a tablet was sent: clients tend to
 * send the same few filters again and again, and compiling means parsing the message and
 * every regex in it. Least recently used goes first. Not thread-safe: one actor's.
 */
final class FilterCache {
  private final Map<ByteBuffer, CompiledFilter> compiled;

  FilterCache(int kept) {
    this.compiled = new LinkedHashMap<>(16, 0.75f, true) {
      @Override
      protected boolean removeEldestEntry(Map.Entry<ByteBuffer, CompiledFilter> eldest) {
        return size() > kept;
      }
    };
  }

  /** The compiled filter; an empty array passes every cell. InvalidFilterException if it is not a valid filter. */
  CompiledFilter compile(byte[] filter) {
    ByteBuffer key = ByteBuffer.wrap(filter);
    CompiledFilter f = compiled.get(key);
    if (f == null) {
      f = compileNow(filter);
      compiled.put(key, f);
    }
    return f;
  }

  private static CompiledFilter compileNow(byte[] filter) {
    try {
      return RowFilters.compile(RowFilter.parseFrom(filter));
    } catch (InvalidProtocolBufferException e) {
      throw new InvalidFilterException("filter", "is not a valid RowFilter message: " + e.getMessage());
    }
  }
}
