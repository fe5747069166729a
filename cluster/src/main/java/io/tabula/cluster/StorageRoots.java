package io.tabula.cluster;

import com.typesafe.config.Config;
import io.tabula.persistence.storage.FileStorage;
import io.tabula.persistence.storage.HdfsStorage;
import io.tabula.persistence.storage.RootIdentity;
import io.tabula.persistence.storage.Storage;
import java.io.Closeable;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.UUID;

/** A node's storage root, from its configuration: local files, HDFS, or a class of the operator's. */
final class StorageRoots {
  private StorageRoots() {}

  /**
   * The storage root: the files under {@code dataDir}, or an instance of the {@link Storage}
   * class that {@code tabula.node.storage-class} names, made with its public constructor that
   * takes the data directory.
   */
  static Storage open(Config config, Path dataDir) throws IOException {
    String uri = config.getString("tabula.node.storage-uri").trim();
    if (!uri.isEmpty()) {
      return openHdfs(config.getConfig("tabula.node.hdfs"), uri);
    }
    String name = config.getString("tabula.node.storage-class").trim();
    if (name.isEmpty()) {
      return new FileStorage(dataDir);
    }
    try {
      Class<? extends Storage> c = Class.forName(name).asSubclass(Storage.class);
      return c.getConstructor(Path.class).newInstance(dataDir);
    } catch (java.lang.reflect.InvocationTargetException e) {
      if (e.getCause() instanceof IOException io) {
        throw io;
      }
      throw new IllegalArgumentException("tabula.node.storage-class " + name + " failed to start: " + e.getCause(),
          e.getCause());
    } catch (ReflectiveOperationException | ClassCastException e) {
      throw new IllegalArgumentException("tabula.node.storage-class must name a class implementing "
          + Storage.class.getName() + " with a public constructor taking a java.nio.file.Path, was " + name
          + ": " + e, e);
    }
  }

  /** The storage root as an operator named it: its URI, or the data directory. */
  static String name(Config config, NodeSettings settings) {
    String uri = config.getString("tabula.node.storage-uri").trim();
    return uri.isEmpty() ? settings.dataDir().toString() : uri;
  }

  /**
   * The settings that carry the storage root's identity to Pekko's join-time check ({@link
   * StorageRootCheck}): the root's id, read from the root (and written there first if the root
   * has none: {@link RootIdentity#establish}), the root's name, and the check itself. Opens the
   * root to do so, and closes it. Blocks on file I/O.
   */
  static Map<String, Object> identitySettings(Config config, NodeSettings settings) throws IOException {
    Storage storage = open(config, settings.dataDir());
    try {
      return Map.of(StorageRootCheck.ID, RootIdentity.establish(storage).toString(), StorageRootCheck.NAME,
          name(config, settings), StorageRootCheck.CHECKER_KEY, StorageRootCheck.class.getName());
    } finally {
      if (storage instanceof Closeable c) { // an HDFS client and its threads
        c.close();
      }
    }
  }

  /**
   * The identity of the storage root this node started on, as {@link #identitySettings} put it
   * in its configuration.
   *
   * @throws IllegalArgumentException if the configuration has none (it was not made by
   *     TabulaNode.embeddedConfig)
   */
  static UUID identity(Config config) {
    String id = config.hasPath(StorageRootCheck.ID) ? config.getString(StorageRootCheck.ID).trim() : "";
    if (id.isEmpty()) {
      throw new IllegalArgumentException("the configuration has no storage root identity (" + StorageRootCheck.ID
          + "); create the actor system with TabulaNode.embeddedConfig(...)");
    }
    return UUID.fromString(id);
  }

  /** The HDFS storage root {@code uri}, with the client settings of {@code hdfs} (tabula.node.hdfs). */
  private static Storage openHdfs(Config hdfs, String uri) throws IOException {
    java.net.URI root;
    try {
      root = new java.net.URI(uri);
    } catch (java.net.URISyntaxException e) {
      throw new IllegalArgumentException("tabula.node.storage-uri is not a URI: " + uri, e);
    }
    if (!"hdfs".equals(root.getScheme())) {
      throw new IllegalArgumentException("tabula.node.storage-uri must be an hdfs:// URI (or empty for the files "
          + "under data-dir), was " + uri);
    }
    org.apache.hadoop.conf.Configuration conf = new org.apache.hadoop.conf.Configuration();
    for (String file : hdfs.getStringList("config-files")) {
      Path p = Path.of(file);
      if (!Files.isReadable(p)) {
        throw new IllegalArgumentException("tabula.node.hdfs.config-files: cannot read " + file);
      }
      conf.addResource(new org.apache.hadoop.fs.Path(p.toUri()));
    }
    return new HdfsStorage(root, conf, hdfs.getDuration("lease-recovery-timeout"));
  }
}
