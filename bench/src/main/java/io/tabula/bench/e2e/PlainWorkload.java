package io.tabula.bench.e2e;

/** The plain-call workloads, in the order they run in a set. */
enum PlainWorkload {
  SEQ_UNARY_WRITE("sequential unary writes", true),
  SEQ_LOAD("sequential writes, batched", true),
  RANDOM_UNARY_WRITE("random unary writes", true),
  RANDOM_LOAD("random writes, batched", true),
  RANDOM_UNARY_READ("random unary reads", false),
  SEQ_UNARY_READ("sequential unary reads", false),
  SCAN("scan", false),
  LONE_WRITE("one write at a time", true),
  LONE_READ("one read at a time", false);

  private final String label;
  private final boolean write;

  PlainWorkload(String label, boolean write) {
    this.label = label;
    this.write = write;
  }

  String label() {
    return label;
  }

  boolean isWrite() {
    return write;
  }

  /** Whether the figure that matters is the median latency of calls made one at a time. */
  boolean isLone() {
    return this == LONE_WRITE || this == LONE_READ;
  }
}
