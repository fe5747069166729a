package io.tabula.cluster.grpc;

import com.google.bigtable.admin.v2.Type;
import io.tabula.persistence.schema.Aggregator;

/**
 * A column family's {@code value_type} (Cloud Bigtable's {@code Type}) to the engine's
 * {@link Aggregator} and back (docs/aggregates.md). A family with no value type, or raw
 * bytes, holds raw values; an aggregate of Int64 input (big-endian, Cloud Bigtable's only
 * encoding for aggregates) with a sum, min, max or HyperLogLog++ unique count is an aggregate
 * family; any other type is refused with INVALID_ARGUMENT naming the field. Stateless.
 */
final class ValueTypes {
  private ValueTypes() {}

  /** The aggregator {@code type} names, or null for raw values. */
  static Aggregator toAggregator(String field, boolean set, Type type) {
    if (!set) {
      return null;
    }
    switch (type.getKindCase()) {
      case KIND_NOT_SET:
        return null;
      case BYTES_TYPE:
        if (type.getBytesType().getEncoding().getEncodingCase()
            == Type.Bytes.Encoding.EncodingCase.ENCODING_NOT_SET || type.getBytesType().getEncoding().hasRaw()) {
          return null;
        }
        throw GrpcErrors.invalid(field + ".bytes_type.encoding", "must be raw");
      case AGGREGATE_TYPE:
        break;
      default:
        throw GrpcErrors.invalid(field, "is a " + type.getKindCase().name().toLowerCase() + "; a column family holds"
            + " raw bytes or an aggregate (Tabula supports no other value type)");
    }
    Type.Aggregate a = type.getAggregateType();
    Type in = a.getInputType();
    if (in.getKindCase() != Type.KindCase.INT64_TYPE) {
      throw GrpcErrors.invalid(field + ".aggregate_type.input_type", "must be int64_type, was "
          + (in.getKindCase() == Type.KindCase.KIND_NOT_SET ? "not set" : in.getKindCase().name().toLowerCase()));
    }
    if (in.getInt64Type().getEncoding().getEncodingCase() == Type.Int64.Encoding.EncodingCase.ORDERED_CODE_BYTES) {
      throw GrpcErrors.invalid(field + ".aggregate_type.input_type.int64_type.encoding",
          "must be big_endian_bytes for an aggregate");
    }
    return switch (a.getAggregatorCase()) {
      case SUM -> Aggregator.SUM;
      case MIN -> Aggregator.MIN;
      case MAX -> Aggregator.MAX;
      case HLLPP_UNIQUE_COUNT -> Aggregator.HLL;
      case AGGREGATOR_NOT_SET -> throw GrpcErrors.invalid(field + ".aggregate_type",
          "names no aggregator (sum, min, max or hllpp_unique_count)");
    };
  }

  /** The value type of a family with aggregator {@code a}, as GetTable answers it (with its state type). */
  static Type toType(Aggregator a) {
    Type int64 = Type.newBuilder().setInt64Type(Type.Int64.newBuilder().setEncoding(Type.Int64.Encoding.newBuilder()
        .setBigEndianBytes(Type.Int64.Encoding.BigEndianBytes.getDefaultInstance()))).build();
    Type.Aggregate.Builder b = Type.Aggregate.newBuilder().setInputType(int64);
    switch (a) {
      case SUM -> b.setSum(Type.Aggregate.Sum.getDefaultInstance()).setStateType(int64);
      case MIN -> b.setMin(Type.Aggregate.Min.getDefaultInstance()).setStateType(int64);
      case MAX -> b.setMax(Type.Aggregate.Max.getDefaultInstance()).setStateType(int64);
      case HLL -> b.setHllppUniqueCount(Type.Aggregate.HyperLogLogPlusPlusUniqueCount.getDefaultInstance())
          .setStateType(Type.newBuilder().setBytesType(Type.Bytes.newBuilder().setEncoding(Type.Bytes.Encoding
              .newBuilder().setRaw(Type.Bytes.Encoding.Raw.getDefaultInstance()))));
    }
    return Type.newBuilder().setAggregateType(b).build();
  }
}
