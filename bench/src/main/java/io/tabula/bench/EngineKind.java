package io.tabula.bench;

import java.io.IOException;
import java.nio.file.Path;
import java.util.Locale;

/** The engines the benchmark compares, in the order their columns appear. */
enum EngineKind {
  /**
   * The Tabula engine with a scan cache beside its block cache ({@link EngineConfig#scanCacheBytes}).
   * First, so that a run of it and {@link #TABULA} reports it over the engine without one.
   */
  TABULA_SCAN_CACHE("tabula-scan-cache", "Tabula + scan cache"),
  TABULA("tabula", "Tabula"),
  /**
   * The Tabula engine with a commit log that appends to plain segments instead of writing over
   * prepared ones ({@code tabula.node.log-prepare-segments = off}). After {@link #TABULA}, so that
   * a run of the two reports the default over it.
   */
  TABULA_PLAIN_LOG("tabula-plain-log", "Tabula, plain log"),
  ROCKSDB("rocksdb", "RocksDB"),
  /** The Tabula engine with its files on HDFS (an in-process cluster on 127.0.0.1: {@link BenchHdfs}). */
  TABULA_HDFS("tabula-hdfs", "Tabula on HDFS");

  private final String id;
  private final String label;

  EngineKind(String id, String label) {
    this.id = id;
    this.label = label;
  }

  String id() {
    return id;
  }

  String label() {
    return label;
  }

  /** Opens a fresh engine of this kind in the empty directory {@code dir}. */
  Engine create(Path dir, EngineConfig config, WriteMode mode) throws IOException {
    return switch (this) {
      case TABULA -> TabulaEngine.create(new io.tabula.persistence.storage.FileStorage(dir), config, mode, 0, true);
      case TABULA_PLAIN_LOG -> TabulaEngine.create(new io.tabula.persistence.storage.FileStorage(dir), config, mode, 0,
          false);
      case TABULA_SCAN_CACHE -> TabulaEngine.create(new io.tabula.persistence.storage.FileStorage(dir), config, mode,
          config.scanCacheBytes(), true);
      case ROCKSDB -> RocksEngine.create(dir, config, mode);
      case TABULA_HDFS -> TabulaEngine.create(BenchHdfs.newFolder(), config, mode, 0, true);
    };
  }

  /**
   * The engine named {@code id} on the command line.
   *
   * @throws IllegalArgumentException naming the known engines
   */
  static EngineKind byId(String id) {
    String wanted = id.trim().toLowerCase(Locale.ROOT);
    for (EngineKind k : values()) {
      if (k.id.equals(wanted)) {
        return k;
      }
    }
    throw new IllegalArgumentException("unknown engine '" + id + "'; known: tabula, tabula-scan-cache, tabula-plain-log, rocksdb, "
        + "tabula-hdfs");
  }
}
