package io.tabula.bench.e2e;

/**
 * One client's timed run of one workload.
 *
 * @param client the client's name
 * @param api the calls one request made
 * @param perRequest values one request wrote or read (a scan request: rows of its range)
 * @param result what {@link InFlight} measured
 * @param rowBytes key and value bytes of one row, for MB/s
 * @param cpu CPU time of the node and the client during the timed window
 */
record Measured(E2eWorkload workload, String client, String api, int perRequest, InFlight.Result result,
    long rowBytes, CpuUse cpu) {
  /** This run and {@code other} (same workload and client) pooled: values and time added, latencies merged. */
  Measured plus(Measured other) {
    return new Measured(workload, client, api, perRequest, result.plus(other.result), rowBytes,
        cpu.plus(other.cpu));
  }

  double valuesPerSecond() {
    return result.valuesPerSecond();
  }

  /** Megabytes (10^6 bytes) of keys and values per second. */
  double megabytesPerSecond() {
    return result.valuesPerSecond() * rowBytes / 1e6;
  }

  /** Node CPU microseconds per value. */
  double nodeCpuMicrosPerValue() {
    return result.values() == 0 ? Double.NaN : cpu.nodeNanos() / 1e3 / result.values();
  }

  /** Client CPU microseconds per value. */
  double clientCpuMicrosPerValue() {
    return result.values() == 0 ? Double.NaN : cpu.clientNanos() / 1e3 / result.values();
  }

  /** Cores the node and the client kept busy together, on average over the window. */
  double coresBusy() {
    return result.nanos() == 0 ? Double.NaN : (cpu.nodeNanos() + cpu.clientNanos()) / (double) result.nanos();
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
