package io.tabula.cluster.conformance;

import com.google.api.gax.rpc.ApiException;
import com.google.api.gax.rpc.StatusCode;
import com.google.cloud.bigtable.data.v2.models.KeyOffset;
import com.google.cloud.bigtable.data.v2.models.MutateRowsException;
import com.google.cloud.bigtable.data.v2.models.Row;
import com.google.cloud.bigtable.data.v2.models.RowCell;
import com.google.protobuf.ByteString;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import java.util.function.Supplier;

/**
 * Turns what the official client returns into plain text that two servers can be compared
 * on: rows with keys, families, qualifiers, timestamps, values and labels, or the gRPC
 * status code of an error (never its message, which differs between implementations).
 *
 * <p>Timestamps: scenarios write explicit timestamps far below {@link #SERVER_TIME_FLOOR}
 * (a few thousand microseconds), which render exactly. A timestamp at or above the floor
 * was chosen by the server (server-side timestamp, ReadModifyWriteRow): it renders as
 * {@code server} when it has millisecond granularity and {@code server!micros} when not, so
 * presence and order are compared but not the clock value.
 */
final class Render {
  /** 2001-09-09 in microseconds; every explicit timestamp in the scenarios is far smaller. */
  static final long SERVER_TIME_FLOOR = 1_000_000_000_000_000L;

  private Render() {}

  /** Runs {@code action}; an {@link ApiException} becomes {@code error CODE}. */
  static String outcome(Supplier<String> action) {
    try {
      return action.get();
    } catch (MutateRowsException e) {
      return bulkFailure(e);
    } catch (ApiException e) {
      return error(e);
    }
  }

  static String error(ApiException e) {
    StatusCode.Code code = e.getStatusCode().getCode();
    if (UNEXPECTED.contains(code)) {
      SURPRISES.get().add(e);
    }
    return "error " + code;
  }

  /**
   * Codes no scenario expects of a healthy server: it did not answer in time, or failed
   * inside. Such errors are kept (see {@link #takeSurprises}) so that a failed comparison can
   * say which call failed and how, beyond the code.
   */
  private static final Set<StatusCode.Code> UNEXPECTED = EnumSet.of(StatusCode.Code.DEADLINE_EXCEEDED,
      StatusCode.Code.UNAVAILABLE, StatusCode.Code.INTERNAL, StatusCode.Code.UNKNOWN, StatusCode.Code.CANCELLED);
  /** The unexpected errors rendered on this thread since the last {@link #takeSurprises}. */
  private static final ThreadLocal<List<ApiException>> SURPRISES = ThreadLocal.withInitial(ArrayList::new);

  /** The unexpected errors rendered on this thread since the last call, and forgets them. */
  static List<ApiException> takeSurprises() {
    List<ApiException> taken = List.copyOf(SURPRISES.get());
    SURPRISES.get().clear();
    return taken;
  }

  /** An error's status, message and the first frames of its stack and causes, for a failure message. */
  static String describe(Throwable e) {
    StringBuilder out = new StringBuilder();
    for (Throwable t = e; t != null && out.length() < 4000; t = t.getCause()) {
      out.append(t == e ? "" : "caused by: ").append(t).append('\n');
      StackTraceElement[] frames = t.getStackTrace();
      for (int i = 0; i < Math.min(12, frames.length); i++) {
        out.append("    at ").append(frames[i]).append('\n');
      }
    }
    return out.toString();
  }

  /** The failed entries of a bulk mutation, by index, with their codes. */
  static String bulkFailure(MutateRowsException e) {
    List<String> lines = new ArrayList<>();
    e.getFailedMutations().stream()
        .sorted((a, b) -> Integer.compare(a.getIndex(), b.getIndex()))
        .forEach(f -> lines.add("entry " + f.getIndex() + ": " + error(f.getError())));
    return "bulk failed\n" + String.join("\n", lines);
  }

  static String rows(Iterable<Row> rows) {
    StringBuilder out = new StringBuilder();
    int count = 0;
    for (Row row : rows) {
      out.append(row(row));
      count++;
    }
    return out.append(count).append(" rows").toString();
  }

  static String row(Row row) {
    if (row == null) {
      return "(no row)\n";
    }
    StringBuilder out = new StringBuilder("row ").append(bytes(row.getKey())).append('\n');
    for (RowCell cell : row.getCells()) {
      out.append("  ").append(cell.getFamily()).append(':').append(bytes(cell.getQualifier()))
          .append(" @").append(timestamp(cell.getTimestamp()))
          .append(" = ").append(bytes(cell.getValue()));
      if (!cell.getLabels().isEmpty()) {
        out.append(" labels=").append(cell.getLabels());
      }
      out.append('\n');
    }
    return out.toString();
  }

  static String timestamp(long micros) {
    if (micros < SERVER_TIME_FLOOR) {
      return Long.toString(micros);
    }
    return micros % 1000 == 0 ? "server" : "server!micros";
  }

  /**
   * Sample row keys compared loosely (splits differ by implementation): whether the list
   * is non-empty, whether keys are sorted and offsets non-decreasing, and whether it ends
   * with the empty key standing for the end of the table.
   */
  static String sample(List<KeyOffset> offsets) {
    boolean sorted = true;
    for (int i = 1; i < offsets.size(); i++) {
      KeyOffset prev = offsets.get(i - 1);
      KeyOffset cur = offsets.get(i);
      boolean lastIsEnd = i == offsets.size() - 1 && cur.getKey().isEmpty();
      if (!lastIsEnd && ByteString.unsignedLexicographicalComparator()
          .compare(prev.getKey(), cur.getKey()) >= 0) {
        sorted = false;
      }
      if (cur.getOffsetBytes() < prev.getOffsetBytes()) {
        sorted = false;
      }
    }
    boolean endsWithEmpty = !offsets.isEmpty() && offsets.get(offsets.size() - 1).getKey().isEmpty();
    return "non-empty=" + !offsets.isEmpty() + " sorted=" + sorted + " ends-with-empty-key=" + endsWithEmpty;
  }

  /** Printable ASCII as is; other bytes, quotes and backslashes as {@code \xNN}. */
  static String bytes(ByteString b) {
    StringBuilder out = new StringBuilder("\"");
    for (int i = 0; i < b.size(); i++) {
      int c = b.byteAt(i) & 0xff;
      if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\') {
        out.append((char) c);
      } else {
        out.append(String.format("\\x%02x", c));
      }
    }
    if (b.size() > 64) {
      return "<" + b.size() + " bytes starting " + out.substring(0, 33) + "...\">";
    }
    return out.append('"').toString();
  }
}
