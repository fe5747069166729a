package io.tabula.client;

import com.google.bigtable.admin.v2.Type;

/**
 * The value type of an aggregate column family (docs/aggregates.md): what the cells written
 * with {@link RowMutation#addToCell} hold. Int64 input; a sum, min or max is 8 bytes
 * big-endian, a unique count a HyperLogLog++ sketch.
 */
public enum Aggregate {
  SUM,
  MIN,
  MAX,
  /** HyperLogLog++ unique count. */
  HLL;

  /** The family's {@code value_type} as the Cloud Bigtable admin API carries it. */
  public Type toProto() {
    Type.Aggregate.Builder b = Type.Aggregate.newBuilder().setInputType(Type.newBuilder().setInt64Type(
        Type.Int64.newBuilder().setEncoding(Type.Int64.Encoding.newBuilder().setBigEndianBytes(
            Type.Int64.Encoding.BigEndianBytes.getDefaultInstance()))));
    switch (this) {
      case SUM -> b.setSum(Type.Aggregate.Sum.getDefaultInstance());
      case MIN -> b.setMin(Type.Aggregate.Min.getDefaultInstance());
      case MAX -> b.setMax(Type.Aggregate.Max.getDefaultInstance());
      case HLL -> b.setHllppUniqueCount(Type.Aggregate.HyperLogLogPlusPlusUniqueCount.getDefaultInstance());
    }
    return Type.newBuilder().setAggregateType(b).build();
  }

  /** The aggregate a family's {@code value_type} names, or null for raw values. */
  public static Aggregate fromProto(Type t) {
    if (t.getKindCase() != Type.KindCase.AGGREGATE_TYPE) {
      return null;
    }
    return switch (t.getAggregateType().getAggregatorCase()) {
      case SUM -> SUM;
      case MIN -> MIN;
      case MAX -> MAX;
      case HLLPP_UNIQUE_COUNT -> HLL;
      case AGGREGATOR_NOT_SET -> null;
    };
  }
}
