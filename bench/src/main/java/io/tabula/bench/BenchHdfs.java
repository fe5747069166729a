package io.tabula.bench;

import io.tabula.persistence.storage.HdfsStorage;
import io.tabula.persistence.storage.MiniHdfs;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The HDFS the {@code tabula-hdfs} engine runs on: Hadoop's own in-process cluster (one
 * namenode, one datanode, blocks on this machine's disk under a temporary folder), started at
 * the first use and stopped at the end of the run. Reads travel from the datanode over loopback
 * TCP (no short-circuit local reads), which is what a node reading from a datanode on its own
 * machine pays without them.
 */
public final class BenchHdfs {
  private static MiniHdfs hdfs;
  private static Path base;
  private static int folders;

  private BenchHdfs() {}

  /** A client on a new, empty folder of the bench's HDFS, which is started if need be (and stopped by {@link #stop}). */
  public static synchronized HdfsStorage newFolder() throws IOException {
    if (hdfs == null) {
      base = Files.createTempDirectory("tabula-bench-hdfs");
      hdfs = MiniHdfs.start(base);
    }
    return hdfs.storage("bench-" + ++folders);
  }

  /** Stops the bench's HDFS, if it was started, and deletes its files. */
  public static synchronized void stop() throws IOException {
    if (hdfs == null) {
      return;
    }
    hdfs.close(); // deletes the cluster's own folders
    hdfs = null;
    if (!Files.exists(base)) {
      return;
    }
    try (var files = Files.walk(base)) {
      files.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    }
  }
}
