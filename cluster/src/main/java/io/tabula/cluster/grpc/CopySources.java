package io.tabula.cluster.grpc;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigValueType;
import io.tabula.persistence.storage.FileStorage;
import io.tabula.persistence.storage.HdfsStorage;
import io.tabula.persistence.storage.Storage;
import java.io.Closeable;
import java.io.IOException;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The storage roots of other Tabula instances that {@code CopyBackup} may copy backups from
 * ({@code tabula.backup.copy-sources}: instance id to a {@code file:} or {@code hdfs:} URI),
 * read once when the node starts; a bad entry stops the start with the key named. A source
 * root is opened for one copy and closed after it ({@link #open}); nothing is ever written
 * there. Immutable: thread-safe.
 */
final class CopySources {
  static final String KEY = "tabula.backup.copy-sources";

  private final Map<String, URI> roots;
  private final List<String> hdfsConfigFiles;
  private final Duration leaseRecoveryTimeout;

  private CopySources(Map<String, URI> roots, List<String> hdfsConfigFiles, Duration leaseRecoveryTimeout) {
    this.roots = Map.copyOf(roots);
    this.hdfsConfigFiles = List.copyOf(hdfsConfigFiles);
    this.leaseRecoveryTimeout = leaseRecoveryTimeout;
  }

  static CopySources none() {
    return new CopySources(Map.of(), List.of(), Duration.ofSeconds(60));
  }

  /** The sources {@code config} names; IllegalArgumentException naming the key for an entry that is not a URI we read. */
  static CopySources from(Config config) {
    Map<String, URI> roots = new TreeMap<>();
    if (config.hasPath(KEY)) {
      Config sources = config.getConfig(KEY);
      for (Map.Entry<String, com.typesafe.config.ConfigValue> e : sources.root().entrySet()) {
        String key = KEY + "." + e.getKey();
        if (e.getValue().valueType() != ConfigValueType.STRING) {
          throw new IllegalArgumentException(key + " must be a file: or hdfs: URI string");
        }
        String uri = (String) e.getValue().unwrapped();
        try {
          URI u = new URI(uri.trim());
          if (!"file".equals(u.getScheme()) && !"hdfs".equals(u.getScheme())) {
            throw new IllegalArgumentException(key + " must be a file: or hdfs: URI, was " + uri);
          }
          roots.put(e.getKey(), u);
        } catch (URISyntaxException bad) {
          throw new IllegalArgumentException(key + " is not a URI: " + uri, bad);
        }
      }
    }
    Config hdfs = config.getConfig("tabula.node.hdfs");
    return new CopySources(roots, hdfs.getStringList("config-files"), hdfs.getDuration("lease-recovery-timeout"));
  }

  /** Whether backups of instance {@code instanceId} may be copied from. */
  boolean has(String instanceId) {
    return roots.containsKey(instanceId);
  }

  /** The instance ids, for messages. */
  java.util.Set<String> ids() {
    return roots.keySet();
  }

  /**
   * Opens instance {@code instanceId}'s root for reading; the caller closes it ({@link
   * #close}). A local root that is not a folder is refused (a storage would make it, empty).
   */
  Storage open(String instanceId) throws IOException {
    URI u = roots.get(instanceId);
    if (u == null) {
      throw new IllegalArgumentException("no copy source " + instanceId);
    }
    if ("file".equals(u.getScheme())) {
      Path p = Path.of(u);
      if (!Files.isDirectory(p)) {
        throw new java.nio.file.NoSuchFileException(p.toString(), null, KEY + "." + instanceId
            + " names no folder on this node");
      }
      return new FileStorage(p);
    }
    org.apache.hadoop.conf.Configuration conf = new org.apache.hadoop.conf.Configuration();
    for (String file : hdfsConfigFiles) {
      conf.addResource(new org.apache.hadoop.fs.Path(Path.of(file).toUri()));
    }
    return new HdfsStorage(u, conf, leaseRecoveryTimeout);
  }

  /** Closes a storage {@link #open} gave (an HDFS client and its threads). */
  static void close(Storage s) {
    if (s instanceof Closeable c) {
      try {
        c.close();
      } catch (IOException e) {
        org.slf4j.LoggerFactory.getLogger(CopySources.class).warn("closing a copy source {}: {}", s, e.toString());
      }
    }
  }
}
