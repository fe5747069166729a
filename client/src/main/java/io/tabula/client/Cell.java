package io.tabula.client;

import com.google.protobuf.ByteString;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Objects;

/**
 * One version of one column of a row: family, qualifier, timestamp in microseconds, value,
 * and the labels a {@link Filter#label} put on it. Immutable.
 */
public record Cell(String family, ByteString qualifier, long timestampMicros, ByteString value, List<String> labels) {
  public Cell {
    Objects.requireNonNull(family, "family");
    Objects.requireNonNull(qualifier, "qualifier");
    Objects.requireNonNull(value, "value");
    labels = List.copyOf(labels);
  }

  public String qualifierUtf8() {
    return qualifier.toStringUtf8();
  }

  public String valueUtf8() {
    return value.toString(StandardCharsets.UTF_8);
  }

  /** The value as a big-endian 64-bit integer, as read-modify-write increments store it. */
  public long valueAsLong() {
    if (value.size() != 8) {
      throw new IllegalStateException("value has " + value.size() + " bytes, a counter has 8");
    }
    return value.asReadOnlyByteBuffer().getLong();
  }
}
