package io.tabula.bench.e2e;

import java.util.concurrent.CompletionStage;

/**
 * A client library driving a Tabula node in the end-to-end benchmark. Every table it makes
 * has one family {@link #FAMILY} that keeps one version; row {@code i} of the
 * {@link io.tabula.bench.Dataset} holds its value in the one cell {@code f:v} at timestamp
 * {@link #TIMESTAMP_MICROS}, so writing a row again replaces the cell. Every call is
 * asynchronous and completes with the number of values it wrote or read back correctly; a
 * wrong or missing value fails it. Implementations are thread-safe.
 */
interface ClientUnderTest extends AutoCloseable {
  String FAMILY = "f";
  String QUALIFIER = "v";
  long TIMESTAMP_MICROS = 1_000L;
  /** Every how many values read one is compared byte by byte (all are checked for length). */
  int FULL_CHECK_EVERY = 16;

  /** The name in the results, e.g. "Tabula client". */
  String name();

  /** The calls each kind of request makes, for the results. */
  String writeApi();

  String readApi();

  String scanApi();

  /** Creates {@code table} with the family {@link #FAMILY}, garbage-collected to one version. */
  void createTable(String table) throws Exception;

  /** Writes rows {@code rows[from..to)} in one request. */
  CompletionStage<Integer> write(String table, int[] rows, int from, int to);

  /** Reads rows {@code rows[from..to)} (distinct, any order) in one request and checks each. */
  CompletionStage<Integer> read(String table, int[] rows, int from, int to);

  /** Reads every row of the key range of rows {@code [fromRow, toRow)} in one streamed request and checks them. */
  CompletionStage<Integer> scan(String table, int fromRow, int toRow);
}
