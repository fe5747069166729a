package io.tabula.client;

import com.google.bigtable.v2.Idempotency;
import com.google.bigtable.v2.Mutation;
import com.google.bigtable.v2.TimestampRange;
import com.google.bigtable.v2.Value;
import com.google.protobuf.ByteString;
import java.util.ArrayList;
import java.util.List;

/**
 * The changes to one row, applied atomically and in the order added (paper Figure 2):
 * <pre>{@code
 * RowMutation m = RowMutation.create("com.cnn.www")
 *     .setCell("anchor", "www.c-span.org", "CNN")
 *     .deleteCells("anchor", "www.abc.com");
 * client.apply("webtable", m);
 * }</pre>
 * A cell set without a timestamp gets the server's time when it is applied; such a
 * mutation is not idempotent (a retry would write a second version), so the client does
 * not retry it. Each application of a mutation that adds to or merges into an aggregate cell
 * ({@link #addToCell}) carries an idempotency token of its own, sent with every attempt, so
 * the node applies it once however often it is retried within ten minutes of the first
 * (docs/aggregates.md); applying the same mutation again is another application. Not
 * thread-safe; build it on one thread, then hand it over.
 */
public final class RowMutation {
  /** The timestamp that asks the server to assign the time of the write. */
  static final long SERVER_TIME = -1;

  private final ByteString key;
  private final List<Mutation> mutations = new ArrayList<>();
  private boolean idempotent = true;
  /** Whether it adds to or merges into an aggregate cell: each application then carries a token. */
  private boolean aggregates;

  private RowMutation(ByteString key) {
    this.key = Bytes.key(key);
  }

  public static RowMutation create(String key) {
    return new RowMutation(Bytes.of(key, "key"));
  }

  public static RowMutation create(byte[] key) {
    return new RowMutation(Bytes.of(key, "key"));
  }

  public static RowMutation create(ByteString key) {
    return new RowMutation(Bytes.of(key, "key"));
  }

  public ByteString key() {
    return key;
  }

  /** Sets a cell at the server's time of the write. */
  public RowMutation setCell(String family, String qualifier, String value) {
    return setCell(family, Bytes.of(qualifier, "qualifier"), SERVER_TIME, Bytes.of(value, "value"));
  }

  /** Sets a cell at the server's time of the write. */
  public RowMutation setCell(String family, ByteString qualifier, ByteString value) {
    return setCell(family, qualifier, SERVER_TIME, value);
  }

  public RowMutation setCell(String family, String qualifier, long timestampMicros, String value) {
    return setCell(family, Bytes.of(qualifier, "qualifier"), timestampMicros, Bytes.of(value, "value"));
  }

  /** Sets a cell to a 64-bit big-endian integer (the encoding increments work on). */
  public RowMutation setCell(String family, String qualifier, long timestampMicros, long value) {
    return setCell(family, Bytes.of(qualifier, "qualifier"), timestampMicros, Bytes.ofLong(value));
  }

  /**
   * Sets a cell; {@code timestampMicros} is microseconds since the epoch, or -1 for the
   * server's time of the write.
   */
  public RowMutation setCell(String family, ByteString qualifier, long timestampMicros, ByteString value) {
    if (timestampMicros < SERVER_TIME) {
      throw new IllegalArgumentException("timestamp must be >= 0 (or -1 for the server's time), was "
          + timestampMicros);
    }
    mutations.add(Mutation.newBuilder().setSetCell(Mutation.SetCell.newBuilder().setFamilyName(Bytes.family(family))
        .setColumnQualifier(Bytes.of(qualifier, "qualifier")).setTimestampMicros(timestampMicros)
        .setValue(Bytes.of(value, "value"))).build());
    // Only once the cell is in: a call refused above must leave the mutation as it was.
    if (timestampMicros == SERVER_TIME) {
      idempotent = false;
    }
    return this;
  }

  /** Deletes every version of one column. */
  public RowMutation deleteCells(String family, String qualifier) {
    return deleteCells(family, Bytes.of(qualifier, "qualifier"), 0, 0);
  }

  /**
   * Deletes the versions of one column with timestamps in [fromMicros, toMicros); a
   * {@code toMicros} of 0 means no upper bound.
   */
  public RowMutation deleteCells(String family, String qualifier, long fromMicros, long toMicros) {
    return deleteCells(family, Bytes.of(qualifier, "qualifier"), fromMicros, toMicros);
  }

  public RowMutation deleteCells(String family, ByteString qualifier, long fromMicros, long toMicros) {
    if (fromMicros < 0 || toMicros < 0) {
      throw new IllegalArgumentException("timestamps must not be negative, got [" + fromMicros + ", " + toMicros + ")");
    }
    if (toMicros != 0 && toMicros <= fromMicros) {
      throw new IllegalArgumentException("time range [" + fromMicros + ", " + toMicros + ") is empty");
    }
    mutations.add(Mutation.newBuilder().setDeleteFromColumn(Mutation.DeleteFromColumn.newBuilder()
        .setFamilyName(Bytes.family(family)).setColumnQualifier(Bytes.of(qualifier, "qualifier"))
        .setTimeRange(TimestampRange.newBuilder().setStartTimestampMicros(fromMicros).setEndTimestampMicros(toMicros)))
        .build());
    return this;
  }

  /**
   * Adds {@code input} to the cell of an aggregate family (Int64 sum, min, max or HyperLogLog++
   * unique count) at {@code timestampMicros} (a multiple of 1000).
   */
  public RowMutation addToCell(String family, String qualifier, long timestampMicros, long input) {
    return aggregate(Mutation.newBuilder().setAddToCell(Mutation.AddToCell.newBuilder()
        .setFamilyName(Bytes.family(family)).setColumnQualifier(Value.newBuilder().setRawValue(
            Bytes.of(qualifier, "qualifier"))).setTimestamp(aggregateTime(timestampMicros))
        .setInput(Value.newBuilder().setIntValue(input))).build());
  }

  /** Merges {@code state} (a state of the family's aggregate, as a read returns it) into an aggregate cell. */
  public RowMutation mergeToCell(String family, ByteString qualifier, long timestampMicros, ByteString state) {
    return aggregate(Mutation.newBuilder().setMergeToCell(Mutation.MergeToCell.newBuilder()
        .setFamilyName(Bytes.family(family)).setColumnQualifier(Value.newBuilder().setRawValue(
            Bytes.of(qualifier, "qualifier"))).setTimestamp(aggregateTime(timestampMicros))
        .setInput(Value.newBuilder().setBytesValue(Bytes.of(state, "state")))).build());
  }

  private static Value aggregateTime(long timestampMicros) {
    if (timestampMicros < 0) {
      throw new IllegalArgumentException("an aggregate cell's timestamp must be >= 0 (there is no server time for"
          + " it), was " + timestampMicros);
    }
    return Value.newBuilder().setRawTimestampMicros(timestampMicros).build();
  }

  private RowMutation aggregate(Mutation m) {
    mutations.add(m);
    aggregates = true;
    return this;
  }

  private static final java.security.SecureRandom TOKENS = new java.security.SecureRandom();

  /**
   * A new idempotency token for one application of this mutation (sent with each of its
   * attempts, never with another application), or null when it has no aggregate write: every
   * other mutation is idempotent or not retried.
   */
  Idempotency newIdempotency() {
    if (!aggregates) {
      return null;
    }
    byte[] t = new byte[16];
    TOKENS.nextBytes(t);
    long now = System.currentTimeMillis();
    return Idempotency.newBuilder().setToken(ByteString.copyFrom(t)).setStartTime(com.google.protobuf.Timestamp
        .newBuilder().setSeconds(now / 1000).setNanos((int) (now % 1000) * 1_000_000)).build();
  }

  /** Deletes every cell of one family. */
  public RowMutation deleteFamily(String family) {
    mutations.add(Mutation.newBuilder().setDeleteFromFamily(Mutation.DeleteFromFamily.newBuilder()
        .setFamilyName(Bytes.family(family))).build());
    return this;
  }

  /** Deletes the whole row; mutations added after this one apply to the emptied row. */
  public RowMutation deleteRow() {
    mutations.add(Mutation.newBuilder().setDeleteFromRow(Mutation.DeleteFromRow.getDefaultInstance()).build());
    return this;
  }

  /**
   * True if applying it twice leaves the row as applying it once: no cell takes the server's
   * time, and aggregate writes are covered by its idempotency token.
   */
  public boolean isIdempotent() {
    return idempotent;
  }

  public int size() {
    return mutations.size();
  }

  /** The mutations in the Cloud Bigtable v2 wire form, in the order added. */
  public List<Mutation> toProto() {
    return List.copyOf(mutations);
  }

  /** Approximate bytes on the wire, for sizing batches. */
  int wireBytes() {
    int n = key.size();
    for (Mutation m : mutations) {
      n += m.getSerializedSize();
    }
    return n;
  }
}
