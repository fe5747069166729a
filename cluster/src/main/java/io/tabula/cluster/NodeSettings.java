package io.tabula.cluster;

import com.typesafe.config.Config;
import io.tabula.persistence.tablet.TabletOptions;
import io.tabula.persistence.tablet.TabletServer;
import io.tabula.persistence.wal.CommitLogOptions;
import io.tabula.persistence.wal.Durability;
import java.nio.file.Path;
import java.time.Duration;

/** The {@code tabula.node} settings, read once. */
public record NodeSettings(Path dataDir, String host, int grpcPort, int httpPort, String id, long blockCacheBytes,
    int backgroundThreads, long memtableBytes, long logSegmentBytes, Durability durability,
    Duration askTimeout, Duration movedRetryFor, Duration masterStartTimeout) {

  public static NodeSettings from(Config node) {
    String d = node.getString("durability");
    Durability durability = switch (d) {
      case "fsync" -> Durability.FSYNC;
      case "os-buffered" -> Durability.OS_BUFFERED;
      default -> throw new IllegalArgumentException("tabula.node.durability must be fsync or os-buffered, was " + d);
    };
    return new NodeSettings(Path.of(node.getString("data-dir")).toAbsolutePath(), node.getString("host"),
        node.getInt("grpc-port"), node.getInt("http-port"), node.getString("id"), node.getBytes("block-cache"),
        node.getInt("background-threads"), node.getBytes("memtable-bytes"), node.getBytes("log-segment-bytes"),
        durability, node.getDuration("ask-timeout"), node.getDuration("moved-retry-for"),
        node.getDuration("master-start-timeout"));
  }

  TabletServer.Options engineOptions() {
    return new TabletServer.Options(id, blockCacheBytes, backgroundThreads,
        new CommitLogOptions(logSegmentBytes, durability), TabletOptions.defaults().withMemtableBytes(memtableBytes));
  }
}
