package io.tabula.bench;

import java.util.Locale;

/** The workloads of the paper's Figure 6 (§7), each run on every engine. */
enum Workload {
  SEQUENTIAL_WRITE_DURABLE("seq-write-durable", "sequential write, durable", WriteMode.DURABLE, false),
  SEQUENTIAL_WRITE_BUFFERED("seq-write-buffered", "sequential write, buffered", WriteMode.BUFFERED, false),
  RANDOM_WRITE_DURABLE("random-write-durable", "random write, durable", WriteMode.DURABLE, true),
  RANDOM_WRITE_BUFFERED("random-write-buffered", "random write, buffered", WriteMode.BUFFERED, true),
  RANDOM_READ("random-read", "random read (data > cache)", null, true),
  RANDOM_READ_MEM("random-read-mem", "random read (hot set < cache)", null, true),
  SEQUENTIAL_READ("seq-read", "sequential read (point reads)", null, false),
  SCAN("scan", "scan (full-range iterator)", null, false);

  private final String id;
  private final String label;
  private final WriteMode writeMode;
  private final boolean random;

  Workload(String id, String label, WriteMode writeMode, boolean random) {
    this.id = id;
    this.label = label;
    this.writeMode = writeMode;
    this.random = random;
  }

  /** The name on the command line. */
  String id() {
    return id;
  }

  /** The name in result tables. */
  String label() {
    return label;
  }

  boolean isWrite() {
    return writeMode != null;
  }

  /** How a write workload acknowledges writes; null for a read workload. */
  WriteMode writeMode() {
    return writeMode;
  }

  /** Whether keys are visited in a random order rather than in key order. */
  boolean isRandom() {
    return random;
  }

  /**
   * The workload named {@code id} on the command line.
   *
   * @throws IllegalArgumentException naming the known workloads
   */
  static Workload byId(String id) {
    String wanted = id.trim().toLowerCase(Locale.ROOT);
    for (Workload w : values()) {
      if (w.id.equals(wanted)) {
        return w;
      }
    }
    StringBuilder known = new StringBuilder();
    for (Workload w : values()) {
      known.append(known.length() == 0 ? "" : ", ").append(w.id);
    }
    throw new IllegalArgumentException("unknown workload '" + id + "'; known: " + known);
  }
}
