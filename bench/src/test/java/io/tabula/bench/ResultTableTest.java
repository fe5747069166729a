package io.tabula.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** A run of three engines reports the third too, not only the two its ratio compares. */
class ResultTableTest {
  private static Measurement opsPerSecond(long ops) {
    return new Measurement(ops, 1_000_000_000L, ops * 1_000, CacheCounters.NONE);
  }

  @Test
  void everyEngineOfARunIsReported() {
    ResultTable t = new ResultTable(EngineKind.TABULA, EngineKind.TABULA_PLAIN_LOG);
    t.add(Workload.SEQUENTIAL_WRITE_DURABLE, EngineKind.TABULA, opsPerSecond(50_000));
    t.add(Workload.SEQUENTIAL_WRITE_DURABLE, EngineKind.TABULA_PLAIN_LOG, opsPerSecond(55_000));
    assertEquals("", t.everyEngineMarkdown(), "two engines: the main table holds both");
    t.add(Workload.SEQUENTIAL_WRITE_DURABLE, EngineKind.ROCKSDB, opsPerSecond(72_000));
    String every = t.everyEngineMarkdown();
    assertTrue(every.startsWith("| Workload | Tabula ops/s | Tabula, plain log ops/s | RocksDB ops/s |"), every);
    assertTrue(every.contains("| sequential write, durable | 50,000 | 55,000 | 72,000 |"), every);
  }
}
