package io.tabula.bench.e2e;

/**
 * One client's timed run of one workload.
 *
 * @param client the client's name
 * @param api the calls one request made
 * @param perRequest values one request wrote or read (a scan request: rows of its range)
 * @param result what {@link InFlight} measured
 * @param rowBytes key and value bytes of one row, for MB/s
 */
record Measured(E2eWorkload workload, String client, String api, int perRequest, InFlight.Result result,
    long rowBytes) {
  /** This run and {@code other} (same workload and client) pooled: values and time added, latencies merged. */
  Measured plus(Measured other) {
    return new Measured(workload, client, api, perRequest, result.plus(other.result), rowBytes);
  }

  double valuesPerSecond() {
    return result.valuesPerSecond();
  }

  /** Megabytes (10^6 bytes) of keys and values per second. */
  double megabytesPerSecond() {
    return result.valuesPerSecond() * rowBytes / 1e6;
  }

  /** This rate divided by the paper's one-server rate. */
  double timesPaper() {
    return valuesPerSecond() / workload.paperValuesPerSecond();
  }

  boolean meetsTenTimesPaper() {
    return timesPaper() >= 10;
  }

  boolean meetsCloud() {
    return workload.meetsCloud(valuesPerSecond(), megabytesPerSecond());
  }
}
