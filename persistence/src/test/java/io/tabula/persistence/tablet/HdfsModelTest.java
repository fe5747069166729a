package io.tabula.persistence.tablet;

import io.tabula.persistence.storage.HdfsStorage;
import io.tabula.persistence.storage.MiniHdfs;
import io.tabula.persistence.storage.Storage;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Random;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.io.TempDir;

/**
 * The randomized model test ({@link ModelTest}) on a real HDFS: the same random mutations,
 * reads, scans, flushes, compactions, splits and reopens, against {@link HdfsStorage} on an
 * in-process HDFS cluster. A crash here is the process dying: its HDFS client drops every
 * file it was writing without closing it, and the next life recovers the HDFS leases of the
 * log's files first (what fencing does to a dead node's log), so the files' lengths are
 * whatever the datanodes kept: every synced byte, and sometimes more (bytes that reached the
 * datanodes without the writer hearing back), which may end in a torn batch.
 */
class HdfsModelTest extends ModelTest {
  @TempDir
  static Path base;
  private static MiniHdfs hdfs;
  private static int runs;

  private HdfsStorage current;
  private long recoveryNanos;

  @BeforeAll
  static void startHdfs() throws IOException {
    hdfs = MiniHdfs.start(base);
  }

  @AfterAll
  static void stopHdfs() {
    if (hdfs != null) {
      hdfs.close();
    }
  }

  @Override
  Storage openDisk() throws IOException {
    current = hdfs.storage("model-" + ++runs);
    return current;
  }

  @Override
  int defaultSteps() {
    return 1000;
  }

  @Override
  void cutPower(Random rnd) {
    storage().die(rnd);
    current.abandonWrites();
  }

  @Override
  Storage reopenDiskAfterCrash() throws IOException {
    current.close();
    current = hdfs.storage("model-" + runs);
    long t = System.nanoTime();
    current.recoverLeases(Storage.path("logs", "node-1"));
    recoveryNanos += System.nanoTime() - t;
    return current;
  }

  @org.junit.jupiter.api.AfterEach
  void report() {
    System.out.printf("HdfsModelTest: %.1f s recovering the HDFS leases of the log after crashes%n", recoveryNanos / 1e9);
  }
}
