package io.tabula.bench.e2e;

import com.google.protobuf.ByteString;
import io.tabula.bench.Dataset;
import java.util.Arrays;
import java.util.List;
import java.util.function.ToIntFunction;

/**
 * What both clients check of what they read: each row asked for comes back once with the
 * value the {@link Dataset} gives it, and a scan returns exactly the rows of its range.
 * Thread-safe.
 */
final class Checks {
  private final Dataset data;

  Checks(Dataset data) {
    this.data = data;
  }

  /** The row number of a key {@code row%010d}. */
  static int rowOf(ByteString key) {
    if (key.size() != Dataset.KEY_BYTES) {
      throw new IllegalStateException("unexpected row key " + key.toStringUtf8());
    }
    int n = 0;
    for (int i = 3; i < Dataset.KEY_BYTES; i++) {
      n = n * 10 + (key.byteAt(i) - '0');
    }
    return n;
  }

  /**
   * Checks the value of row {@code row}: its length always, its bytes for one row in
   * {@link ClientUnderTest#FULL_CHECK_EVERY}.
   */
  void value(String client, int row, ByteString value) {
    if (value.size() != data.valueBytes()) {
      throw new IllegalStateException(client + ": row " + row + " read back " + value.size() + " bytes, expected "
          + data.valueBytes());
    }
    if (row % ClientUnderTest.FULL_CHECK_EVERY == 0 && !data.isValueOf(row, value.toByteArray())) {
      throw new IllegalStateException(client + ": row " + row + " read back the wrong bytes");
    }
  }

  /**
   * Checks each row of {@code got} with {@code check}, which answers its row number, and
   * that they are exactly rows {@code rows[from..to)}; returns how many there were.
   */
  static <R> int readBack(String client, int[] rows, int from, int to, List<R> got, ToIntFunction<R> check) {
    int[] have = new int[got.size()];
    for (int k = 0; k < have.length; k++) {
      have[k] = check.applyAsInt(got.get(k));
    }
    sameRows(client, rows, from, to, have);
    return have.length;
  }

  private static void sameRows(String client, int[] rows, int from, int to, int[] have) {
    int[] want = Arrays.copyOfRange(rows, from, to);
    int n = have.length;
    Arrays.sort(want);
    Arrays.sort(have);
    if (!Arrays.equals(want, have)) {
      throw new IllegalStateException(client + ": asked for " + want.length + " rows " + brief(want) + ", got " + n
          + " " + brief(have));
    }
  }

  /** Checks that a scan of rows {@code [fromRow, toRow)} returned {@code n} rows, all in the range. */
  static void scanned(String client, int fromRow, int toRow, int n) {
    if (n != toRow - fromRow) {
      throw new IllegalStateException(client + ": scan of rows [" + fromRow + ", " + toRow + ") returned " + n
          + " rows");
    }
  }

  private static String brief(int[] rows) {
    return rows.length <= 8 ? Arrays.toString(rows)
        : Arrays.toString(Arrays.copyOf(rows, 8)).replace("]", ", ...]");
  }
}
