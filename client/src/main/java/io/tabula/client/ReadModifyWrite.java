package io.tabula.client;

import com.google.bigtable.v2.ReadModifyWriteRule;
import com.google.protobuf.ByteString;
import java.util.ArrayList;
import java.util.List;

/**
 * Atomic read-modify-write of one row: increments of 64-bit big-endian counters and
 * appends to values, applied in order to the newest version of each column; the server
 * writes the results at its current time and returns the changed cells. Never retried by
 * the client (applying it twice is not applying it once). Not thread-safe while built.
 */
public final class ReadModifyWrite {
  private final ByteString key;
  private final List<ReadModifyWriteRule> rules = new ArrayList<>();

  private ReadModifyWrite(ByteString key) {
    this.key = Bytes.key(key);
  }

  public static ReadModifyWrite create(String key) {
    return new ReadModifyWrite(Bytes.of(key, "key"));
  }

  public static ReadModifyWrite create(ByteString key) {
    return new ReadModifyWrite(Bytes.of(key, "key"));
  }

  public ByteString key() {
    return key;
  }

  /** Adds {@code by} to the counter (a missing cell counts as 0). */
  public ReadModifyWrite increment(String family, String qualifier, long by) {
    rules.add(ReadModifyWriteRule.newBuilder().setFamilyName(Bytes.family(family))
        .setColumnQualifier(Bytes.of(qualifier, "qualifier")).setIncrementAmount(by).build());
    return this;
  }

  /** Appends {@code value} to the cell's value (a missing cell counts as empty). */
  public ReadModifyWrite append(String family, String qualifier, String value) {
    return append(family, Bytes.of(qualifier, "qualifier"), Bytes.of(value, "value"));
  }

  public ReadModifyWrite append(String family, ByteString qualifier, ByteString value) {
    rules.add(ReadModifyWriteRule.newBuilder().setFamilyName(Bytes.family(family))
        .setColumnQualifier(Bytes.of(qualifier, "qualifier")).setAppendValue(Bytes.of(value, "value")).build());
    return this;
  }

  public List<ReadModifyWriteRule> toProto() {
    if (rules.isEmpty()) {
      throw new IllegalStateException("a read-modify-write needs at least one rule");
    }
    return List.copyOf(rules);
  }
}
