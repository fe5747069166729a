package io.tabula.bench.e2e;

import java.util.concurrent.CompletionStage;

/**
 * A client library used the plain way, one row per call, as most applications use it. Every
 * table has the one family {@link #FAMILY} keeping one version; row {@code i} of the
 * {@link io.tabula.bench.Dataset} holds its value in the cell {@code f:v}. Calls complete with
 * the number of values they wrote or read back correctly; a wrong or missing value fails them.
 * Thread-safe.
 */
interface PlainClient extends AutoCloseable {
  String FAMILY = ClientUnderTest.FAMILY;
  String QUALIFIER = ClientUnderTest.QUALIFIER;
  long TIMESTAMP_MICROS = ClientUnderTest.TIMESTAMP_MICROS;

  /** The name in the results, e.g. "official client". */
  String name();

  /** What a workload calls, for the results. */
  String api(PlainWorkload w);

  /** Creates {@code table} with the family {@link #FAMILY}, kept to one version. */
  void createTable(String table) throws Exception;

  /** Writes row {@code row} in one call. */
  CompletionStage<Integer> mutateRow(String table, int row);

  /** Reads row {@code row} in one call and checks it. */
  CompletionStage<Integer> readRow(String table, int row);

  /**
   * Writes every row of {@code order} the library's way of loading (the official client's
   * {@code newBulkMutationBatcher} with its defaults; the Tabula client's batches of
   * {@code batch} rows, {@code inFlight} of them outstanding) and times each row from the call
   * that hands it over to its acknowledgement.
   */
  InFlight.Result load(String table, int[] order, int batch, int inFlight) throws Exception;

  /** Reads the whole table of {@code rows} rows in one streamed call, checking each in order. */
  void scan(String table, int rows) throws Exception;
}
