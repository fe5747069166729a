package io.tabula.cluster.grpc;

import com.google.bigtable.v2.Idempotency;
import com.google.bigtable.v2.Mutation;
import com.google.bigtable.v2.ReadModifyWriteRule;
import com.google.protobuf.ByteString;
import io.tabula.actors.tablet.ReadModifyWriteRule.Append;
import io.tabula.actors.tablet.ReadModifyWriteRule.Increment;
import io.tabula.persistence.compaction.TabletTokensWindow;
import io.tabula.persistence.model.InvalidMutationException;
import io.tabula.persistence.model.RowMutation;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;

/**
 * Cloud Bigtable mutations to engine mutations, checked the way Cloud Bigtable checks them:
 * every problem is an INVALID_ARGUMENT naming the field ({@code mutations[2].set_cell.timestamp_micros}).
 * Timestamps must have millisecond granularity (a multiple of 1000 µs), or be -1 (server
 * time) where a set-cell allows it; a client that writes microsecond timestamps ({@link
 * ClientFeatures}) has them truncated to the millisecond instead.
 */
final class Mutations {
  private Mutations() {}

  /**
   * The most mutations one request may carry: in MutateRow, in each branch of
   * CheckAndMutateRow, in all the entries of MutateRows together (Cloud Bigtable's limit),
   * and rules of ReadModifyWriteRow.
   */
  static final int MAX_MUTATIONS = 100_000;

  /** The row mutation of a MutateRow request. */
  static RowMutation rowMutation(ByteString rowKey, List<Mutation> ms, boolean micros) {
    if (ms.size() > MAX_MUTATIONS) {
      throw GrpcErrors.invalid("mutations", "has " + ms.size() + " mutations; at most " + MAX_MUTATIONS
          + " are allowed");
    }
    return rowMutation(() -> "", rowKey, ms, micros);
  }

  /**
   * A row mutation of a request whose field {@code field} ({@code entries[3]}, or empty for the
   * request itself) holds it; the field's name is built only for an error message.
   */
  static RowMutation rowMutation(Supplier<String> field, ByteString rowKey, List<Mutation> ms,
      boolean micros) {
    byte[] row = row(() -> within(field.get(), "row_key"), rowKey);
    Supplier<String> prefix = () -> within(field.get(), "mutations");
    if (ms.isEmpty()) {
      throw GrpcErrors.invalid(prefix.get(), "at least one mutation is required");
    }
    return build(prefix, row, list(prefix, ms, micros));
  }

  /**
   * {@code rm} with the idempotency token of its request ({@code idempotency} of field {@code
   * field}, when {@code set}): the tablet applies a row mutation with a token it has seen
   * within {@link TabletTokensWindow#MICROS} only once (docs/aggregates.md, "Idempotency"). A
   * first attempt that began longer ago than that is refused with FAILED_PRECONDITION: its
   * token may be forgotten, and applying it again could count it twice.
   */
  static RowMutation withIdempotency(RowMutation rm, String field, boolean set, Idempotency idempotency,
      long nowMicros) {
    if (!set) {
      return rm;
    }
    int size = idempotency.getToken().size();
    if (size < io.tabula.persistence.model.Mutation.Token.MIN_BYTES
        || size > io.tabula.persistence.model.Mutation.Token.MAX_BYTES) {
      throw GrpcErrors.invalid(within(field, "idempotency.token"), "is " + size + " bytes; a token is "
          + io.tabula.persistence.model.Mutation.Token.MIN_BYTES + " to "
          + io.tabula.persistence.model.Mutation.Token.MAX_BYTES + " bytes");
    }
    if (idempotency.hasStartTime()) {
      com.google.protobuf.Timestamp t = idempotency.getStartTime();
      // a Timestamp's documented range: 0001-01-01 to 9999-12-31, nanos below a second
      if (t.getSeconds() < -62_135_596_800L || t.getSeconds() > 253_402_300_799L || t.getNanos() < 0
          || t.getNanos() > 999_999_999) {
        throw GrpcErrors.invalid(within(field, "idempotency.start_time"), "is not a valid timestamp (seconds "
            + t.getSeconds() + ", nanos " + t.getNanos() + ")");
      }
      long startMicros = t.getSeconds() * 1_000_000 + t.getNanos() / 1000;
      // zero, as unset, always accepts the mutation (Cloud Bigtable's documented choice)
      if (startMicros != 0 && startMicros < nowMicros - TabletTokensWindow.MICROS) {
        throw GrpcErrors.status(io.tabula.protocol.errors.ErrorCode.FAILED_PRECONDITION, within(field,
            "idempotency.start_time") + " is more than " + TabletTokensWindow.MICROS / 60_000_000 + " minutes ago:"
            + " the mutation may have been applied and its token forgotten; it is not applied again",
            within(field, "idempotency.start_time"));
      }
    }
    List<io.tabula.persistence.model.Mutation> ms = new ArrayList<>(rm.mutations());
    ms.add(new io.tabula.persistence.model.Mutation.Token(idempotency.getToken().toByteArray(),
        io.tabula.persistence.model.Mutation.SERVER_TIME));
    return new RowMutation(rm.row(), ms);
  }

  /** {@code name} inside {@code field}, or {@code name} alone for the request itself (empty field). */
  private static String within(String field, String name) {
    return field.isEmpty() ? name : field + "." + name;
  }

  static byte[] row(String field, ByteString rowKey) {
    return row(() -> field, rowKey);
  }

  private static byte[] row(Supplier<String> field, ByteString rowKey) {
    if (rowKey.isEmpty()) {
      throw GrpcErrors.invalid(field.get(), "must not be empty");
    }
    if (rowKey.size() > RowMutation.MAX_ROW_KEY_BYTES) {
      throw GrpcErrors.invalid(field.get(), "is " + rowKey.size() + " bytes, over the limit of "
          + RowMutation.MAX_ROW_KEY_BYTES);
    }
    return rowKey.toByteArray();
  }

  private static RowMutation build(Supplier<String> prefix, byte[] row,
      List<io.tabula.persistence.model.Mutation> ms) {
    try {
      return new RowMutation(row, ms);
    } catch (InvalidMutationException e) {
      throw GrpcErrors.invalid(e.field().startsWith("mutations") ? prefix.get() + e.field().substring(9)
          : e.field(), e.getMessage());
    }
  }

  /**
   * A check-and-mutate branch: engine mutations for a list that may be empty, checked as a
   * row mutation of {@code row} when it is not.
   */
  static List<io.tabula.persistence.model.Mutation> branch(String field, byte[] row, List<Mutation> ms,
      boolean micros) {
    if (ms.size() > MAX_MUTATIONS) {
      throw GrpcErrors.invalid(field, "has " + ms.size() + " mutations; at most " + MAX_MUTATIONS + " are allowed");
    }
    List<io.tabula.persistence.model.Mutation> out = list(() -> field, ms, micros);
    if (!out.isEmpty()) {
      build(() -> field, row, out);
    }
    return out;
  }

  /** Engine mutations for a list that may be empty; {@code prefix} names the list in errors. */
  private static List<io.tabula.persistence.model.Mutation> list(Supplier<String> prefix, List<Mutation> ms,
      boolean micros) {
    List<io.tabula.persistence.model.Mutation> out = new ArrayList<>(ms.size());
    for (int i = 0; i < ms.size(); i++) {
      out.add(one(prefix, i, ms.get(i), micros));
    }
    return out;
  }

  /** The name of a field of mutation {@code i}, built only when a message needs it. */
  private static String at(Supplier<String> prefix, int i, String suffix) {
    return prefix.get() + "[" + i + "]" + suffix;
  }

  private static io.tabula.persistence.model.Mutation one(Supplier<String> prefix, int i, Mutation m,
      boolean micros) {
    switch (m.getMutationCase()) {
      case SET_CELL -> {
        Mutation.SetCell s = m.getSetCell();
        if (s.getFamilyName().isEmpty()) {
          throw GrpcErrors.invalid(at(prefix, i, ".set_cell.family_name"), EMPTY);
        }
        long ts = truncated(s.getTimestampMicros(), micros);
        String bad = ts == -1 ? null : timestampProblem(ts);
        if (bad != null) {
          throw GrpcErrors.invalid(at(prefix, i, ".set_cell.timestamp_micros"), bad);
        }
        return new io.tabula.persistence.model.Mutation.SetCell(s.getFamilyName(), s.getColumnQualifier()
            .toByteArray(), ts, s.getValue().toByteArray());
      }
      case DELETE_FROM_COLUMN -> {
        Mutation.DeleteFromColumn d = m.getDeleteFromColumn();
        if (d.getFamilyName().isEmpty()) {
          throw GrpcErrors.invalid(at(prefix, i, ".delete_from_column.family_name"), EMPTY);
        }
        long start = 0;
        long end = io.tabula.persistence.model.Mutation.DeleteFromColumn.ALL_VERSIONS_END;
        if (d.hasTimeRange()) {
          // A range over millisecond cells keeps its meaning with its bounds rounded up: a cell at t (a multiple of
          // 1000) is at or after start exactly when at or after start rounded up, and likewise before end. An end
          // of 0 is no end, whatever the rounding.
          start = roundedUp(d.getTimeRange().getStartTimestampMicros(), micros);
          long e = roundedUp(d.getTimeRange().getEndTimestampMicros(), micros);
          String bad = timestampProblem(start);
          if (bad != null) {
            throw GrpcErrors.invalid(at(prefix, i, ".delete_from_column.time_range.start_timestamp_micros"), bad);
          }
          bad = timestampProblem(e);
          if (bad != null) {
            throw GrpcErrors.invalid(at(prefix, i, ".delete_from_column.time_range.end_timestamp_micros"), bad);
          }
          if (e != 0) {
            if (e < start) {
              throw GrpcErrors.invalid(at(prefix, i, ".delete_from_column.time_range"), "end " + e
                  + " is before start " + start);
            }
            end = e;
          }
        }
        if (end <= start) {
          return new io.tabula.persistence.model.Mutation.DeleteFromColumn(d.getFamilyName(),
              d.getColumnQualifier().toByteArray(), start, start + 1);
        }
        return new io.tabula.persistence.model.Mutation.DeleteFromColumn(d.getFamilyName(),
            d.getColumnQualifier().toByteArray(), start, end);
      }
      case DELETE_FROM_FAMILY -> {
        if (m.getDeleteFromFamily().getFamilyName().isEmpty()) {
          throw GrpcErrors.invalid(at(prefix, i, ".delete_from_family.family_name"), EMPTY);
        }
        return new io.tabula.persistence.model.Mutation.DeleteFromFamily(m.getDeleteFromFamily().getFamilyName());
      }
      case DELETE_FROM_ROW -> {
        return io.tabula.persistence.model.Mutation.DeleteFromRow.INSTANCE;
      }
      case ADD_TO_CELL -> {
        Mutation.AddToCell a = m.getAddToCell();
        String at = at(prefix, i, ".add_to_cell");
        family(at + ".family_name", a.getFamilyName());
        long input = switch (a.getInput().getKindCase()) {
          case INT_VALUE -> a.getInput().getIntValue();
          case KIND_NOT_SET -> 0; // NULL is taken as 0, as Cloud Bigtable takes it (for a min or max too)
          default -> throw GrpcErrors.invalid(at + ".input", "must be an int_value (the aggregate families here take"
              + " Int64 input), was " + kind(a.getInput()));
        };
        return new io.tabula.persistence.model.Mutation.AddToCell(a.getFamilyName(),
            qualifier(at, a.getColumnQualifier()), aggregateTimestamp(at, a.getTimestamp(), micros), input);
      }
      case MERGE_TO_CELL -> {
        Mutation.MergeToCell mc = m.getMergeToCell();
        String at = at(prefix, i, ".merge_to_cell");
        family(at + ".family_name", mc.getFamilyName());
        byte[] state = switch (mc.getInput().getKindCase()) {
          case BYTES_VALUE -> mc.getInput().getBytesValue().toByteArray();
          case RAW_VALUE -> mc.getInput().getRawValue().toByteArray(); // what the Java client sends
          case KIND_NOT_SET -> null; // NULL merges nothing
          default -> throw GrpcErrors.invalid(at + ".input", "must be a bytes_value or raw_value holding a state of"
              + " the family's aggregate, was " + kind(mc.getInput()));
        };
        return new io.tabula.persistence.model.Mutation.MergeToCell(mc.getFamilyName(),
            qualifier(at, mc.getColumnQualifier()), aggregateTimestamp(at, mc.getTimestamp(), micros), state);
      }
      case MUTATION_NOT_SET -> throw GrpcErrors.invalid(at(prefix, i, ""), "no mutation is set");
      default -> throw GrpcErrors.invalid(at(prefix, i, ""), m.getMutationCase().name().toLowerCase()
          + " mutations are not supported by Tabula");
    }
  }

  /** The qualifier of an aggregate mutation: a {@code raw_value}. */
  private static byte[] qualifier(String at, com.google.bigtable.v2.Value q) {
    if (q.getKindCase() != com.google.bigtable.v2.Value.KindCase.RAW_VALUE
        && q.getKindCase() != com.google.bigtable.v2.Value.KindCase.KIND_NOT_SET) {
      throw GrpcErrors.invalid(at + ".column_qualifier", "must be a raw_value, was " + kind(q));
    }
    return q.getRawValue().toByteArray();
  }

  /** The timestamp of an aggregate mutation: a {@code raw_timestamp_micros} of millisecond granularity, no server time. */
  private static long aggregateTimestamp(String at, com.google.bigtable.v2.Value t, boolean micros) {
    if (t.getKindCase() != com.google.bigtable.v2.Value.KindCase.RAW_TIMESTAMP_MICROS) {
      throw GrpcErrors.invalid(at + ".timestamp", "must be a raw_timestamp_micros, was " + kind(t));
    }
    long ts = truncated(t.getRawTimestampMicros(), micros);
    String bad = timestampProblem(ts);
    if (bad != null) {
      throw GrpcErrors.invalid(at + ".timestamp", bad);
    }
    return ts;
  }

  /** How a Value's kind is named in an error: its field, or "not set". */
  private static String kind(com.google.bigtable.v2.Value v) {
    return v.getKindCase() == com.google.bigtable.v2.Value.KindCase.KIND_NOT_SET ? "not set"
        : v.getKindCase().name().toLowerCase();
  }

  private static final String EMPTY = "must not be empty";

  private static void family(String field, String family) {
    if (family.isEmpty()) {
      throw GrpcErrors.invalid(field, EMPTY);
    }
  }

  /**
   * {@code ts} to the millisecond below it when the client writes microsecond timestamps
   * ({@link ClientFeatures}), as Cloud Bigtable takes them for a table of millisecond
   * granularity; as it is otherwise (and -1, server time, always).
   */
  private static long truncated(long ts, boolean micros) {
    return micros && ts > 0 ? ts - ts % 1000 : ts;
  }

  /** {@code ts} to the millisecond at or above it when the client writes microsecond timestamps; as it is otherwise. */
  private static long roundedUp(long ts, boolean micros) {
    return micros && ts > 0 && ts % 1000 != 0 ? ts - ts % 1000 + 1000 : ts;
  }

  /** What is wrong with a timestamp a mutation gives, or null when it is fine. */
  private static String timestampProblem(long ts) {
    if (ts < 0) {
      return "must not be negative, was " + ts;
    }
    if (ts % 1000 != 0) {
      return "timestamp " + ts + " must have millisecond granularity (a multiple of 1000 microseconds)";
    }
    return null;
  }

  /**
   * The rules of a ReadModifyWriteRow request, checked as the cells they write will be: a
   * family name of at most {@value RowMutation#MAX_FAMILY_BYTES} bytes, a qualifier of at
   * most {@value RowMutation#MAX_QUALIFIER_BYTES}, an appended value of at most
   * {@value RowMutation#MAX_VALUE_BYTES}, and at most {@value #MAX_MUTATIONS} rules.
   */
  static List<io.tabula.actors.tablet.ReadModifyWriteRule> rules(List<ReadModifyWriteRule> rules) {
    if (rules.isEmpty()) {
      throw GrpcErrors.invalid("rules", "at least one rule is required");
    }
    if (rules.size() > MAX_MUTATIONS) {
      throw GrpcErrors.invalid("rules", "has " + rules.size() + " rules; at most " + MAX_MUTATIONS + " are allowed");
    }
    List<io.tabula.actors.tablet.ReadModifyWriteRule> out = new ArrayList<>();
    for (int i = 0; i < rules.size(); i++) {
      ReadModifyWriteRule r = rules.get(i);
      String f = "rules[" + i + "]";
      family(f + ".family_name", r.getFamilyName());
      if (r.getFamilyName().length() > RowMutation.MAX_FAMILY_BYTES / 3
          && r.getFamilyNameBytes().size() > RowMutation.MAX_FAMILY_BYTES) {
        throw GrpcErrors.invalid(f + ".family_name", "is " + r.getFamilyNameBytes().size() + " bytes, over the limit of "
            + RowMutation.MAX_FAMILY_BYTES);
      }
      if (r.getColumnQualifier().size() > RowMutation.MAX_QUALIFIER_BYTES) {
        throw GrpcErrors.invalid(f + ".column_qualifier", "is " + r.getColumnQualifier().size()
            + " bytes, over the limit of " + RowMutation.MAX_QUALIFIER_BYTES);
      }
      if (r.getAppendValue().size() > RowMutation.MAX_VALUE_BYTES) {
        throw GrpcErrors.invalid(f + ".append_value", "is " + r.getAppendValue().size()
            + " bytes, over the limit of " + RowMutation.MAX_VALUE_BYTES);
      }
      byte[] q = r.getColumnQualifier().toByteArray();
      out.add(switch (r.getRuleCase()) {
        case APPEND_VALUE -> new Append(r.getFamilyName(), q, r.getAppendValue().toByteArray());
        case INCREMENT_AMOUNT -> new Increment(r.getFamilyName(), q, r.getIncrementAmount());
        default -> throw GrpcErrors.invalid(f, "neither append_value nor increment_amount is set");
      });
    }
    return out;
  }
}
