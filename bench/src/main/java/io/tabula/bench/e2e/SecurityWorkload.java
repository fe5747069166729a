package io.tabula.bench.e2e;

/**
 * The workloads of {@link SecurityCostBench}, in the order they run in a round, with the most
 * that TLS and authentication may add to the node's CPU per value (the target): 10% on
 * batched calls, 20% on single-row calls.
 */
enum SecurityWorkload {
  BATCHED_WRITE("batched writes", true, true),
  SINGLE_WRITE("single-row writes", false, true),
  BATCHED_READ("batched reads", true, false),
  SCAN("scans", true, false),
  SINGLE_READ("single-row reads", false, false);

  static final double BATCHED_LIMIT = 1.10;
  static final double SINGLE_LIMIT = 1.20;

  private final String label;
  private final boolean batched;
  private final boolean write;

  SecurityWorkload(String label, boolean batched, boolean write) {
    this.label = label;
    this.batched = batched;
    this.write = write;
  }

  String label() {
    return label;
  }

  boolean isWrite() {
    return write;
  }

  /** The most the secured node's CPU per value may be, as a multiple of the plain node's. */
  double limit() {
    return batched ? BATCHED_LIMIT : SINGLE_LIMIT;
  }
}
