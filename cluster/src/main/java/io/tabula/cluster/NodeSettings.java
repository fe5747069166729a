package io.tabula.cluster;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigException;
import io.tabula.persistence.tablet.MemtableBudget;
import io.tabula.persistence.tablet.TabletOptions;
import io.tabula.persistence.tablet.TabletServer;
import io.tabula.persistence.wal.CommitLogOptions;
import io.tabula.persistence.wal.Durability;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.regex.Pattern;

/** The {@code tabula.node} settings, read once. */
public record NodeSettings(Path dataDir, String host, int grpcPort, int httpPort, String name, int clusterPort,
    List<String> join, long blockCacheBytes, int backgroundThreads, long memtableBytes, long memtableBudgetBytes,
    long logSegmentBytes, boolean logPrepareSegments,
    Durability durability, Duration askTimeout, Duration movedRetryFor, Duration masterStartTimeout,
    Duration wakeOwnedEvery, Duration drainTimeout, long scanCacheBytes, boolean memtableSlabs,
    long sstableSyncEveryBytes) {
  private static final Pattern NAME = Pattern.compile("[A-Za-z0-9_-]{1,64}");

  public static NodeSettings from(Config node) {
    String d = node.getString("durability");
    Durability durability = switch (d) {
      case "fsync" -> Durability.FSYNC;
      case "os-buffered" -> Durability.OS_BUFFERED;
      default -> throw new IllegalArgumentException("tabula.node.durability must be fsync or os-buffered, was " + d);
    };
    String name = node.getString("name");
    if (!NAME.matcher(name).matches()) {
      throw new IllegalArgumentException("tabula.node.name must be 1 to 64 letters, digits, '-' or '_', was '"
          + name + "'");
    }
    List<String> join = node.getStringList("join");
    for (String seed : join) {
      if (!seed.matches("[^:\\s]+:\\d{1,5}")) {
        throw new IllegalArgumentException("tabula.node.join entries must be host:port, was '" + seed + "'");
      }
    }
    return new NodeSettings(Path.of(node.getString("data-dir")).toAbsolutePath(), node.getString("host"),
        node.getInt("grpc-port"), node.getInt("http-port"), name, node.getInt("cluster-port"), List.copyOf(join),
        node.getBytes("block-cache"), node.getInt("background-threads"), node.getBytes("memtable-bytes"),
        memtableBudget(node), node.getBytes("log-segment-bytes"),
        node.getBoolean("log-prepare-segments"), durability, node.getDuration("ask-timeout"),
        node.getDuration("moved-retry-for"), node.getDuration("master-start-timeout"),
        node.getDuration("wake-owned-every"), node.getDuration("drain-timeout"), node.getBytes("scan-cache"),
        node.getBoolean("memtable-slabs"), node.getBytes("sstable-sync-every"));
  }

  /**
   * {@code memtable-budget}: a size ("512MiB") or a share of the heap ("40%"), at least
   * {@link MemtableBudget#MIN_BYTES}.
   */
  private static long memtableBudget(Config node) {
    String key = "tabula.node.memtable-budget";
    String v = node.getString("memtable-budget").trim();
    try {
      if (v.endsWith("%")) {
        return MemtableBudget.heapShare(Double.parseDouble(v.substring(0, v.length() - 1).trim()));
      }
      return MemtableBudget.checked(node.getBytes("memtable-budget"));
    } catch (NumberFormatException | ConfigException e) {
      throw new IllegalArgumentException(key + " must be a size (512MiB) or a share of the heap (40%), was '" + v
          + "'");
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(key + ": " + e.getMessage());
    }
  }

  /** The storage engine's options, its commit log in the folder {@code logName} under {@code logs/}. */
  TabletServer.Options engineOptions(String logName) {
    return new TabletServer.Options(logName, blockCacheBytes, backgroundThreads,
        new CommitLogOptions(logSegmentBytes, durability, logPrepareSegments), TabletOptions.defaults().withMemtableBytes(memtableBytes)
            .withValueSlabs(memtableSlabs).withSstableSyncEveryBytes(sstableSyncEveryBytes),
        memtableBudgetBytes).withScanCache(scanCacheBytes);
  }
}
