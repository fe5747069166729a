package io.tabula.cluster;

import com.typesafe.config.Config;
import io.tabula.persistence.storage.FileStorage;
import io.tabula.persistence.storage.HdfsStorage;
import io.tabula.persistence.storage.RootIdentity;
import io.tabula.persistence.storage.Storage;
import io.tabula.persistence.storage.StorageProbe;
import java.io.Closeable;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** A node's storage root, from its configuration: local files, HDFS, or a class of the operator's. */
final class StorageRoots {
  private static final Logger LOG = LoggerFactory.getLogger(StorageRoots.class);

  private StorageRoots() {}

  /**
   * The storage root: the files under {@code dataDir} (refused on an NFS mount without the
   * version and options Tabula needs: {@link NfsMounts}), or an instance of the {@link Storage}
   * class that {@code tabula.node.storage-class} names, made with its public constructor that
   * takes the data directory, or HDFS (refused with observer reads).
   */
  static Storage open(Config config, Path dataDir) throws IOException {
    String uri = config.getString("tabula.node.storage-uri").trim();
    if (!uri.isEmpty()) {
      return openHdfs(config.getConfig("tabula.node.hdfs"), uri);
    }
    String name = config.getString("tabula.node.storage-class").trim();
    if (name.isEmpty()) {
      NfsMounts.checkDataDir(dataDir, config.getBoolean("tabula.node.allow-unsafe-nfs"));
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
   * has none: {@link RootIdentity#establish}), the root's name, a probe of the root written for
   * this life of the node ({@link StorageProbe}, named {@code life}: its name and nonce), and
   * the check itself. First deletes the probes the node's earlier lives left (a life deletes
   * its own once its join is over: {@link #dropProbe}). Opens the root to do so, and closes it.
   * Blocks on file I/O.
   *
   * @param life this life's name, its commit-log folder's ({@code <node>.<incarnation>})
   */
  static Map<String, Object> identitySettings(Config config, NodeSettings settings, String life) throws IOException {
    return withStorage(config, settings.dataDir(), storage -> {
      UUID id = RootIdentity.establish(storage);
      for (String probe : StorageProbe.names(storage)) {
        if (probe.startsWith(settings.name() + ".") && !probe.equals(life)) {
          StorageProbe.delete(storage, probe); // an earlier life's, left by a join that never ended
        }
      }
      UUID nonce = StorageProbe.write(storage, life);
      return Map.of(StorageRootCheck.ID, id.toString(), StorageRootCheck.NAME, name(config, settings),
          StorageRootCheck.probeKey(life), nonce.toString(), StorageRootCheck.CHECKER_KEY,
          StorageRootCheck.class.getName());
    });
  }

  /**
   * Deletes this life's probe ({@link #identitySettings}) once its join is over: it was needed
   * only by the member that handled the join. A failure is logged and left: the next start of
   * the node deletes it.
   */
  static void dropProbe(Storage storage, String life) {
    try {
      StorageProbe.delete(storage, life);
    } catch (IOException | java.io.UncheckedIOException e) {
      LOG.warn("could not delete the storage probe {}/{} (the node's next start does): {}", StorageProbe.FOLDER,
          life, e.toString());
    }
  }

  /** What a member found when it looked for a joining node's probe on its own root. */
  enum ProbeSeen {
    /** The probe is there, with the nonce the joining node sent: the two see the same storage. */
    SAME,
    /** No probe of that name: the joining node wrote it on another storage (a copy of the root). */
    MISSING,
    /** A probe of that name with another nonce: not the joining node's. */
    OTHER,
    /** It could not be read (an I/O error, a damaged file, no answer in time): nothing is shown. */
    UNREADABLE
  }

  /** What a look for a probe found, and for {@link ProbeSeen#UNREADABLE}, why ("" otherwise). */
  record ProbeLook(ProbeSeen seen, String why) {}

  /**
   * Looks for the probe {@code name} with nonce {@code nonce} on the storage root of {@code
   * config} (this node's), waiting {@code within} at most: the read runs on a thread of its own,
   * since Pekko runs the join check on its cluster daemon, which must not wait long on storage
   * (an HDFS namenode that does not answer). Opens the root, and closes it.
   */
  static ProbeLook lookForProbe(Config config, String name, UUID nonce, Duration within) {
    CompletableFuture<Optional<UUID>> read = new CompletableFuture<>();
    Thread reader = new Thread(() -> {
      try {
        read.complete(withStorage(config, NodeSettings.from(config.getConfig("tabula.node")).dataDir(),
            storage -> StorageProbe.read(storage, name)));
      } catch (IOException | RuntimeException e) {
        read.completeExceptionally(e);
      }
    }, "tabula-storage-probe-read");
    reader.setDaemon(true);
    reader.start();
    try {
      Optional<UUID> found = read.get(within.toMillis(), TimeUnit.MILLISECONDS);
      return new ProbeLook(found.isEmpty() ? ProbeSeen.MISSING : found.get().equals(nonce) ? ProbeSeen.SAME
          : ProbeSeen.OTHER, "");
    } catch (TimeoutException e) {
      return new ProbeLook(ProbeSeen.UNREADABLE, "no answer from the storage within " + within.toSeconds() + " s");
    } catch (ExecutionException e) {
      return new ProbeLook(ProbeSeen.UNREADABLE, e.getCause().toString());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return new ProbeLook(ProbeSeen.UNREADABLE, "interrupted");
    }
  }

  /** Work on a storage root. */
  @FunctionalInterface
  private interface StorageWork<T> {
    T on(Storage storage) throws IOException;
  }

  /** Opens the storage root of {@code config}, does {@code work} on it, and closes it. */
  private static <T> T withStorage(Config config, Path dataDir, StorageWork<T> work) throws IOException {
    Storage storage = open(config, dataDir);
    try {
      return work.on(storage);
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
    // Also hdfs-default.xml and an hdfs-site.xml on the class path, as the HDFS client reads them.
    org.apache.hadoop.hdfs.HdfsConfiguration.init();
    refuseObserverReads(conf, root);
    return new HdfsStorage(root, conf, hdfs.getDuration("lease-recovery-timeout"));
  }

  /**
   * The nameservice (or namenode host) the HDFS client reaches for {@code root}: the URI's own,
   * or, for a URI without one ({@code hdfs:///tabula}), that of the client's default file
   * system ({@code fs.defaultFS}) if it has the same scheme, as Hadoop's {@code
   * FileSystem.newInstance} resolves it; null if neither names one.
   */
  static String nameservice(org.apache.hadoop.conf.Configuration conf, java.net.URI root) {
    if (root.getAuthority() != null) {
      return root.getHost();
    }
    java.net.URI fallback = org.apache.hadoop.fs.FileSystem.getDefaultUri(conf);
    return root.getScheme().equals(fallback.getScheme()) ? fallback.getHost() : null;
  }

  /** What Hadoop's client configuration names the proxy provider of a nameservice by. */
  private static final String PROVIDER_KEY = "dfs.client.failover.proxy.provider.";

  /**
   * Refuses an HDFS client that may read from observer namenodes for the storage root's
   * nameservice: a proxy provider ({@code dfs.client.failover.proxy.provider.<nameservice>})
   * that is, extends, or is named as an observer-reading one (Hadoop's {@code
   * ObserverReadProxyProvider} and its kin). An observer may answer {@code exists(FENCED)}
   * before it has applied a fence another client wrote through the active namenode: Hadoop
   * promises read-your-writes only within one client, or after an {@code msync}, so a fenced
   * writer could go on acknowledging and a fenced reader go on answering as current. Only the
   * root's nameservice is looked at ({@link #nameservice}): the node's client reads no other.
   */
  static void refuseObserverReads(org.apache.hadoop.conf.Configuration conf, java.net.URI root) {
    String nameservice = nameservice(conf, root);
    if (nameservice == null) {
      return; // no namenode to reach: the client refuses the URI itself ("Incomplete HDFS URI, no host")
    }
    String key = PROVIDER_KEY + nameservice;
    String provider = conf.getTrimmed(key, "");
    if (provider.isEmpty()) {
      return;
    }
    Class<?> c = conf.getClassByNameOrNull(provider);
    boolean observer = provider.contains("ObserverRead");
    for (; c != null && !observer; c = c.getSuperclass()) {
      observer = c.getSimpleName().contains("ObserverRead");
    }
    if (observer) {
      throw new StartRefusedException(StartRefusedException.Reason.HDFS_OBSERVER_READS, key + " is " + provider
          + ", which reads from observer namenodes: an observer can answer that a commit-log folder is not "
          + "fenced after another node fenced it through the active namenode, and the fenced node would go on "
          + "acknowledging writes. Give the storage root's nameservice a provider that reads from the active "
          + "namenode (org.apache.hadoop.hdfs.server.namenode.ha.ConfiguredFailoverProxyProvider) in the Hadoop "
          + "client's files (tabula.node.hdfs.config-files, or an hdfs-site.xml on the class path; docs/deploy.md)");
    }
  }
}
