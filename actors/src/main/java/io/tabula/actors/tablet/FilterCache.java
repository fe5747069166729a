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
 *
 * <p>The cache is bounded by weight, not by count: a filter's regular expressions may compile
 * to programs of up to 50,000 instructions, and a client sending many such filters must not
 * fill the heap with them. A filter weighs its serialized bytes, a fixed
 * {@value #ENTRY_BYTES} for its objects, and {@value #BYTES_PER_INSTRUCTION} per regex
 * instruction: re2j keeps about 40 bytes per instruction, and each thread that has matched
 * with the pattern leaves a pooled matching machine of about 20 bytes more per instruction
 * (measured on re2j 1.8 with 20 patterns of 50,000 instructions: 38 bytes after compiling,
 * 120 after four threads had matched). So the cache holds at most a few filters at the
 * regex budget, or thousands of ordinary ones.
 */
final class FilterCache {
  static final int ENTRY_BYTES = 4096;
  static final int BYTES_PER_INSTRUCTION = 256;

  private final Cache<ByteBuffer, CompiledFilter> compiled;

  FilterCache(long maxBytes) {
    this.compiled = Caffeine.newBuilder()
        .maximumWeight(maxBytes)
        .weigher((ByteBuffer key, CompiledFilter f) -> weight(key.remaining(), f))
        .build();
  }

  /** What keeping {@code f}, sent as {@code serializedBytes}, costs in bytes (at most about 13 MiB). */
  static int weight(int serializedBytes, CompiledFilter f) {
    return (int) Math.min(Integer.MAX_VALUE,
        serializedBytes + ENTRY_BYTES + BYTES_PER_INSTRUCTION * f.regexInstructions());
  }

  /** The compiled filter; an empty array passes every cell. InvalidFilterException if it is not a valid filter. */
  CompiledFilter compile(byte[] filter) {
    return compiled.get(ByteBuffer.wrap(filter), k -> compileNow(filter));
  }

  /** What the filters kept weigh now, after any pending eviction; and how many they are (for tests). */
  long[] weightAndCount() {
    compiled.cleanUp();
    return new long[] {compiled.policy().eviction().orElseThrow().weightedSize().orElseThrow(),
        compiled.estimatedSize()};
  }

  private static CompiledFilter compileNow(byte[] filter) {
    try {
      return RowFilters.compile(RowFilter.parseFrom(filter));
    } catch (InvalidProtocolBufferException e) {
      throw new InvalidFilterException("filter", "is not a valid RowFilter message: " + e.getMessage());
    }
  }
}
