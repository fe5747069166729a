package io.tabula.bench.e2e;

import java.util.Locale;

/**
 * The six workloads of the paper's Figure 6 (§7), with the paper's one-tablet-server rate
 * in 1000-byte values per second and the Cloud Bigtable per-node SSD figure each is
 * compared with: 14,000 rows/s for writes, 17,000 rows/s for reads, 220 MB/s for scans.
 */
enum E2eWorkload {
  SEQUENTIAL_WRITE("seq-write", "sequential write", 8_547, Cloud.WRITES),
  RANDOM_WRITE("random-write", "random write", 8_850, Cloud.WRITES),
  RANDOM_READ("random-read", "random read (data > block cache)", 1_212, Cloud.READS),
  RANDOM_READ_HOT("random-read-mem", "random read (mem): an in-memory locality group", 10_811,
      Cloud.READS),
  SEQUENTIAL_READ("seq-read", "sequential read", 4_425, Cloud.READS),
  SCAN("scan", "scan", 15_385, Cloud.SCANS);

  /** Cloud Bigtable's published per-node throughput on SSD storage. */
  enum Cloud {
    WRITES(14_000, "14,000 writes/s"),
    READS(17_000, "17,000 reads/s"),
    /** Compared in MB/s, not in rows. */
    SCANS(220, "220 MB/s");

    final double target;
    final String label;

    Cloud(double target, String label) {
      this.target = target;
      this.label = label;
    }
  }

  private final String id;
  private final String label;
  private final double paper;
  private final Cloud cloud;

  E2eWorkload(String id, String label, double paper, Cloud cloud) {
    this.id = id;
    this.label = label;
    this.paper = paper;
    this.cloud = cloud;
  }

  String id() {
    return id;
  }

  String label() {
    return label;
  }

  /** The paper's values per second with one tablet server. */
  double paperValuesPerSecond() {
    return paper;
  }

  Cloud cloud() {
    return cloud;
  }

  boolean isWrite() {
    return cloud == Cloud.WRITES;
  }

  /** Whether the workload meets the Cloud Bigtable per-node figure at this rate. */
  boolean meetsCloud(double valuesPerSecond, double megabytesPerSecond) {
    return cloud == Cloud.SCANS ? megabytesPerSecond >= cloud.target : valuesPerSecond >= cloud.target;
  }

  static E2eWorkload byId(String id) {
    String wanted = id.trim().toLowerCase(Locale.ROOT);
    for (E2eWorkload w : values()) {
      if (w.id.equals(wanted)) {
        return w;
      }
    }
    StringBuilder known = new StringBuilder();
    for (E2eWorkload w : values()) {
      known.append(known.length() == 0 ? "" : ", ").append(w.id);
    }
    throw new IllegalArgumentException("unknown workload '" + id + "'; known: " + known);
  }
}
