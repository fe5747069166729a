package io.tabula.cluster;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.tabula.actors.master.ClusterNodes;
import io.tabula.actors.master.Directory;
import io.tabula.actors.master.TableInfo;
import io.tabula.actors.master.DirectoryCache;
import io.tabula.actors.master.DirectoryFeed;
import io.tabula.actors.master.Master;
import io.tabula.actors.master.MasterCounts;
import io.tabula.actors.master.MasterNodes;
import io.tabula.actors.master.MasterSettings;
import io.tabula.actors.tablet.NodeRequests;
import io.tabula.actors.tablet.TabletNode;
import io.tabula.actors.tablet.TabletSettings;
import io.tabula.cluster.grpc.BigtableServices;
import io.tabula.cluster.http.ManagementHttp;
import io.tabula.cluster.http.TabulaRoutes;
import io.tabula.cluster.metrics.NodeMetrics;
import io.tabula.cluster.routing.NodePeers;
import io.tabula.cluster.routing.Router;
import io.tabula.cluster.routing.UnopenedTablets;
import io.tabula.cluster.security.NodeSecurity;
import io.tabula.cluster.sharding.LostRequests;
import io.tabula.cluster.sharding.OwnedTablets;
import io.tabula.cluster.sharding.TabletShards;
import io.tabula.persistence.schema.TableSchema;
import io.tabula.persistence.storage.RootIdentity;
import io.tabula.persistence.storage.Storage;
import io.tabula.persistence.storage.SyncWatchingStorage;
import io.tabula.persistence.tablet.FileSweeper;
import io.tabula.persistence.tablet.MicrosClock;
import io.tabula.persistence.tablet.Tablet;
import io.tabula.persistence.tablet.TabletServer;
import io.tabula.persistence.wal.LogLostException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.pekko.actor.Address;
import org.apache.pekko.actor.CoordinatedShutdown;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.DispatcherSelector;
import org.apache.pekko.actor.typed.SupervisorStrategy;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.actor.typed.pubsub.Topic;
import org.apache.pekko.cluster.MemberStatus;
import org.apache.pekko.cluster.typed.Cluster;
import org.apache.pekko.cluster.typed.ClusterSingleton;
import org.apache.pekko.cluster.typed.ClusterSingletonSettings;
import org.apache.pekko.cluster.typed.Join;
import org.apache.pekko.cluster.typed.JoinSeedNodes;
import org.apache.pekko.cluster.typed.SingletonActor;
import org.apache.pekko.coordination.lease.LeaseUsageSettings;
import org.apache.pekko.http.javadsl.ServerBinding;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import scala.concurrent.duration.FiniteDuration;

/**
 * A running Tabula node: a Pekko cluster member with the master singleton (behind the
 * master lease), the node's storage engine, its tablets as sharded entities, the Cloud
 * Bigtable gRPC API and Management HTTP.
 *
 * <p>Start-up order matters: the master must have recovered its directory before the
 * engine opens (the engine needs each table's schema) and before any tablet actor starts
 * (an actor finds its tablet in the directory). Shutdown goes through coordinated
 * shutdown: the API unbinds, tablets stop, then the engine flushes every memtable.
 */
public final class TabulaNode implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(TabulaNode.class);
  /** The actor system's name, the same on every node of a cluster. */
  static final String SYSTEM_NAME = "tabula";

  private final ActorSystem<?> system;
  private final NodeSettings settings;
  /** The gRPC API's binding; null when the node serves none ({@code tabula.node.serve-grpc = off}). */
  private final ServerBinding grpc;
  private final int httpPort;
  private final DirectoryCache directory;
  private final TabulaTablets tablets;

  private TabulaNode(ActorSystem<?> system, NodeSettings settings, ServerBinding grpc, int httpPort,
      DirectoryCache directory, TabulaTablets tablets) {
    this.system = system;
    this.settings = settings;
    this.grpc = grpc;
    this.httpPort = httpPort;
    this.directory = directory;
    this.tablets = tablets;
  }

  /** The JDK property that sizes the common fork-join pool. */
  static final String COMMON_POOL_PARALLELISM = "java.util.concurrent.ForkJoinPool.common.parallelism";

  /**
   * Gives the common fork-join pool at least two threads, unless the property is set
   * already. Pekko's Java futures (and Pekko gRPC's generated handlers) run their
   * continuations there, and with fewer than two threads (the default on a 2-core machine)
   * the JDK starts a new thread for every one instead: measured here, that doubled the
   * latency of a point read. Takes effect only before the pool is first used, so an entry
   * point calls it first thing; an embedding application should pass the property itself.
   */
  public static void widenCommonPool() {
    if (System.getProperty(COMMON_POOL_PARALLELISM) == null) {
      System.setProperty(COMMON_POOL_PARALLELISM, Integer.toString(Math.max(2,
          Runtime.getRuntime().availableProcessors())));
    }
  }

  /** Starts a single-node Tabula on 127.0.0.1 with its data under {@code dataDir}; port 0 picks a free port. */
  public static TabulaNode start(Path dataDir, int grpcPort, int httpPort) {
    return start(ConfigFactory.parseMap(Map.of("tabula.node.data-dir", dataDir.toString(), "tabula.node.grpc-port",
        grpcPort, "tabula.node.http-port", httpPort)));
  }

  /**
   * The configuration a node runs with: system properties, then {@code overrides} (an
   * operator's file and flags), then {@code application.conf}, then the node's Pekko
   * settings ({@code tabula-node.conf}), then every library's {@code reference.conf}.
   */
  public static Config configuration(Config overrides) {
    return ConfigFactory.load(overrides.withFallback(ConfigFactory.defaultApplication())
        .withFallback(ConfigFactory.parseResources(TabulaNode.class.getClassLoader(), "tabula-node.conf")));
  }

  /**
   * Starts a node with {@code overrides} layered as {@link #configuration} describes; pass
   * only the keys to change (not a config that already holds the libraries' defaults). Throws
   * {@link StartRefusedException} when the settings or the deployment break an assumption of
   * Tabula's safety (the exception's reason says which, docs/deploy.md says why).
   */
  public static TabulaNode start(Config overrides) {
    if (java.util.concurrent.ForkJoinPool.getCommonPoolParallelism() < 2) {
      LOG.warn("the common fork-join pool has fewer than 2 threads, so every future continuation starts a thread;"
          + " start the JVM with -D{}=2 (or call TabulaNode.widenCommonPool() first thing)", COMMON_POOL_PARALLELISM);
    }
    Config full = embeddedConfig(overrides);
    ActorSystem<Void> system = ActorSystem.create(Behaviors.empty(), SYSTEM_NAME, full);
    try {
      return boot(system, full, NodeSettings.from(full.getConfig("tabula.node")));
    } catch (RuntimeException e) {
      system.terminate();
      throw e;
    }
  }

  /**
   * The configuration an actor system that hosts a Tabula node runs with: {@code
   * application} (an application's own settings, with its {@code tabula.node} section) layered
   * as {@link #configuration} describes, and the settings derived from the node's (its cluster
   * roles, remoting address, the master journal's, the storage root's identity with the
   * join-time check that compares it: {@link StorageRootCheck}) on top. An application that
   * embeds a node creates its {@code ActorSystem}, named {@value #SYSTEM_NAME}, with this, then
   * calls {@link #embed}. Creates the data directory, and opens the storage root to read its
   * identity, writing one first if it has none (docs/formats/root-id.md), and to write this
   * life's probe of the root, which the member it joins reads on its own root
   * (docs/formats/storage-probe.md; deleted once the join is over). Each call names a new life
   * of the node (the commit-log folder it will write, stated in its roles): create one actor
   * system per call.
   */
  public static Config embeddedConfig(Config application) {
    Config config = configuration(application);
    NodeSettings settings = NodeSettings.from(config.getConfig("tabula.node"));
    NodeSecurity security = ExposureCheck.checked(settings.host(), NodeSecurity.from(config));
    try {
      Files.createDirectories(settings.dataDir().resolve("master"));
    } catch (IOException e) {
      throw new UncheckedIOException("cannot create the data directory " + settings.dataDir(), e);
    }
    Map<String, Object> derived = new HashMap<>(MasterJournalSetup.derivedSettings(config, settings));
    // This start's name: its commit-log folder, and its probe of the storage root.
    String life = LogSweeper.folder(settings.name(), incarnation());
    try {
      derived.putAll(StorageRoots.identitySettings(config, settings, life));
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read or create the identity of the storage root "
          + StorageRoots.name(config, settings) + ": " + e.getMessage(), e);
    }
    // Join-time check that every node speaks this version of the internal protocol.
    derived.put(ProtocolCheck.KEY, ProtocolCheck.VERSION);
    derived.put(ProtocolCheck.CHECKER_KEY, ProtocolCheck.class.getName());
    // ... and has the settings every node must share (the sweep's grace).
    derived.put(SharedSettingsCheck.CHECKER_KEY, SharedSettingsCheck.class.getName());
    derived.put("pekko.remote.artery.canonical.hostname", settings.host());
    derived.put("pekko.remote.artery.canonical.port", settings.clusterPort());
    // A node without a gRPC endpoint advertises port 0: clients are then sent to the node they asked.
    int grpcPort = config.getBoolean("tabula.node.serve-grpc") ? settings.grpcPort() : 0;
    // The application's own roles stay.
    List<String> roles = new ArrayList<>(config.getStringList("pekko.cluster.roles"));
    // This start's commit-log folder, named in the roles so that the master fences lives, not names.
    roles.addAll(ClusterNodes.roles(settings.name(), settings.host() + ":" + grpcPort,
        settings.host() + ":" + settings.httpPort(), life));
    derived.put("pekko.cluster.roles", roles);
    derived.putAll(security.derivedSettings()); // TLS between nodes: the cluster's certificate makes a member
    // H2's automatic server mode (the master's journal on one machine) listens where the node does.
    System.setProperty("h2.bindAddress", settings.host());
    return ConfigFactory.parseMap(derived).withFallback(config);
  }

  /**
   * Starts a Tabula node inside an application's own actor system, which must have been
   * created with {@link #embeddedConfig} (named {@value #SYSTEM_NAME}, a cluster provider, the
   * node's roles). The node joins the cluster as {@code tabula.node.join} (or Pekko's
   * {@code seed-nodes}) says, or forms one of its own, and serves its share of tablets; with
   * {@code tabula.node.serve-grpc = off} it binds no gRPC port, and the application reads and
   * writes through {@link #tablets}. The node lives as long as the actor system: it stops in
   * the system's coordinated shutdown (tablets drained to other nodes, memtables flushed).
   *
   * <p>The master names its own journal ({@code tabula.master.journal-plugin}); the actor
   * system's default journal and snapshot store are the application's, for its own persistent
   * actors, and must not name one of the master's. Like {@link #start(Config)}, throws {@link
   * StartRefusedException} for settings or a deployment that break an assumption of Tabula's
   * safety.
   */
  public static TabulaNode embed(ActorSystem<?> system) {
    Config config = system.settings().config();
    if (!system.name().equals(SYSTEM_NAME)) {
      throw new IllegalArgumentException("the actor system hosting a Tabula node must be named '" + SYSTEM_NAME
          + "' (cluster members share their system's name), was '" + system.name() + "'");
    }
    if (!config.getString("pekko.actor.provider").equals("cluster")) {
      throw new IllegalArgumentException("the actor system hosting a Tabula node must have pekko.actor.provider = "
          + "cluster; create it with TabulaNode.embeddedConfig(...)");
    }
    NodeSettings settings = NodeSettings.from(config.getConfig("tabula.node"));
    StorageRoots.identity(config);
    String role = ClusterNodes.roles(settings.name(), "", "", "").get(0);
    if (!config.getStringList("pekko.cluster.roles").contains(role)
        || ClusterNodes.logOf(config.getStringList("pekko.cluster.roles")).isEmpty()) {
      throw new IllegalArgumentException("the actor system lacks the node's cluster role " + role + "; create it "
          + "with TabulaNode.embeddedConfig(...)");
    }
    return boot(system, config, settings);
  }

  private static TabulaNode boot(ActorSystem<?> system, Config config, NodeSettings settings) {
    MasterJournalSetup.checkPlugins(config);
    MasterJournalSetup.checkFenced(config, settings);
    NodeSecurity security = NodeSecurity.from(config);
    Duration wait = settings.masterStartTimeout();
    String logName = ClusterNodes.logOf(config.getStringList("pekko.cluster.roles")).orElseThrow();
    SyncWatchingStorage storage; // a failed fsync of any file stops the node (LogLossStop)
    try {
      storage = new SyncWatchingStorage(StorageRoots.open(config, settings.dataDir()), "logs/" + logName);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot open the storage root " + StorageRoots.name(config, settings), e);
    }
    UUID rootId = StorageRoots.identity(config);
    try {
      // The root the configuration was made from, still (the join check compared that one).
      RootIdentity.check(storage, StorageRoots.name(config, settings), rootId, "this node does not start");
    } catch (IOException e) {
      throw new UncheckedIOException(e.getMessage(), e);
    }
    LOG.info("storage root: {} (root id {})", storage, rootId);
    Cluster cluster = Cluster.get(system);
    int managementPort = 0; // bound before the join when the cluster bootstrap needs it
    try {
      if (config.getString("tabula.node.join-by").equals("bootstrap")) {
        // Management HTTP first: the bootstrap's contact points are the nodes' Management endpoints.
        managementPort = Starting.await(ManagementHttp.start(system, settings.host(), settings.httpPort(), security), wait,
            "starting Management HTTP");
        org.apache.pekko.management.cluster.bootstrap.ClusterBootstrap.get(system).start();
        awaitUp(system, "Pekko Management's cluster bootstrap", wait);
        refuseDuplicateName(cluster, settings);
      } else if (!config.getStringList("pekko.cluster.seed-nodes").isEmpty()) {
        // An embedding application's own seed nodes: Pekko joins them by itself.
        awaitUp(system, "pekko.cluster.seed-nodes " + config.getStringList("pekko.cluster.seed-nodes"), wait);
        refuseDuplicateName(cluster, settings);
      } else {
        joinCluster(system, settings, wait);
      }
    } finally {
      StorageRoots.dropProbe(storage, logName); // the join is over: Up, refused, or given up
    }
    MasterJournalSetup.prepare(system, config, settings, storage, wait);

    DirectoryCache directory = new DirectoryCache(settings.name()); // its share (the whole on the master's node)
    MasterNodes nodes = new ClusterMasterNodes(system, cluster, settings.name(), storage,
        StorageRoots.name(config, settings), rootId,
        new FileSweeper(storage, config.getDuration("tabula.master.sweep-files-grace")));
    Master.Tablets tabletRefs = id -> TabletShards.of(system).tablet(id);
    MasterSettings masterSettings = MasterSettings.from(config.getConfig("tabula.master"));
    // The singleton's manager (and Pekko's proxy, unused) on this node; messages go through
    // MasterProxy, which finds a master started again on the same oldest member.
    ClusterSingleton.get(system).init(SingletonActor.of(
        Behaviors.supervise(Master.create(Master.PERSISTENCE_ID, MicrosClock.SYSTEM::nowMicros, nodes, tabletRefs,
                masterSettings))
            .onFailure(SupervisorStrategy.restartWithBackoff(Duration.ofMillis(200), Duration.ofSeconds(5), 0.2)),
        "master").withStopMessage(Master.Stop.INSTANCE).withSettings(masterSingletonSettings(system)));
    org.apache.pekko.actor.ExtendedActorSystem classic =
        (org.apache.pekko.actor.ExtendedActorSystem) org.apache.pekko.actor.typed.javadsl.Adapter.toClassic(system);
    ActorRef<Master.Command> master = org.apache.pekko.actor.typed.javadsl.Adapter.toTyped(classic.systemActorOf(
        MasterProxy.props("singletonManagermaster", "master", MasterProxy.settings(classic, ClusterNodes.ROLE)),
        "master-proxy"));
    ActorRef<Topic.Command<DirectoryFeed.Change>> topic = system.systemActorOf(
        Topic.create(DirectoryFeed.Change.class, Master.TOPIC), "directory-topic",
        org.apache.pekko.actor.typed.Props.empty());
    system.systemActorOf(DirectoryCache.subscriber(directory, topic, master), "directory-cache",
        org.apache.pekko.actor.typed.Props.empty());
    awaitMaster(system, directory, master, wait);

    // Set once the engine is open: the sweeper stops when this life's own log is lost, or the node stops.
    java.util.concurrent.atomic.AtomicReference<TabletServer> opened = new java.util.concurrent.atomic.AtomicReference<>();
    scala.concurrent.ExecutionContextExecutor blockingIo = system.dispatchers().lookup(DispatcherSelector.blocking());
    LogSweeper sweeper = new LogSweeper(storage, settings.name(), logName, blockingIo,
        () -> CoordinatedShutdown.get(system).getShutdownReason().isPresent()
            || opened.get() != null && opened.get().isLogLost(),
        task -> system.scheduler().scheduleOnce(LogSweeper.RETRY_AFTER, task, blockingIo));
    try {
      // The name is ours now, but an earlier life may still run (frozen, cut off): fenced, it
      // acknowledges nothing more. A fence that fails or hangs is made later, in the background.
      sweeper.fenceEarlierLives(LogSweeper.START_WAIT);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot fence the commit logs of this node's earlier lives under "
          + StorageRoots.name(config, settings), e);
    }
    TabletServer engine;
    try {
      engine = TabletServer.startOnDemand(storage, settings.engineOptions(logName), MicrosClock.SYSTEM,
          table -> schemaOf(directory.get(), table), TabulaNode::backgroundFailed);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot open the storage engine under " + StorageRoots.name(config, settings),
          e);
    }
    opened.set(engine);
    NodeShutdown.registerEngineClose(system, engine, storage);
    // Only a change of the tables (families, groups) changes a schema: the tablets are looked at
    // then, not at every change of the directory (100,000 tablets opening are 100,000 changes).
    java.util.concurrent.atomic.AtomicReference<Map<String, TableInfo>> schemasOf = new java.util.concurrent.atomic
        .AtomicReference<>();
    directory.addListener(d -> {
      if (schemasOf.getAndSet(d.tables()) != d.tables()) {
        updateSchemas(engine, d);
      }
    });
    schemasOf.set(directory.get().tables());
    updateSchemas(engine, directory.get());

    TabletSettings tabletSettings = TabletSettings.from(config.getConfig("tabula.tablet"));
    java.time.Duration mergeColdFor = config.getDuration("tabula.master.merge.cold-for");
    if (!tabletSettings.closeIdleAfter().isZero() && tabletSettings.closeIdleAfter().compareTo(mergeColdFor) <= 0) {
      // Only open tablets merge (a log names them), after being cold this long: tablets that
      // close first never merge.
      LOG.warn("tabula.tablet.close-idle-after ({}) is not longer than tabula.master.merge.cold-for ({}): idle "
          + "tablets close before they may merge, so small idle tablets are never merged", tabletSettings
          .closeIdleAfter(), mergeColdFor);
    }
    TabletNode node = new TabletNode(settings.name(), engine, directory, master, tabletSettings);
    TabletShards tablets = TabletShards.start(system, node);
    system.systemActorOf(LostRequests.create(), "lost-tablet-requests", org.apache.pekko.actor.typed.Props.empty());
    system.systemActorOf(NodeRequests.create(node.local(), tablets::tablet, settings.askTimeout(), storage,
        id -> engine.tablet(id) != null), "node-requests",
        org.apache.pekko.actor.typed.Props.empty());
    OwnedTablets owned = new OwnedTablets(settings.name(), tablets, node.local(), settings.wakeOwnedEvery());
    directory.addListener(owned::wake);
    system.scheduler().scheduleWithFixedDelay(settings.wakeOwnedEvery(), settings.wakeOwnedEvery(),
        () -> owned.wake(directory.get()), system.executionContext());
    system.scheduler().scheduleWithFixedDelay(Duration.ofMillis(100), Duration.ofMillis(100),
        () -> owned.wakeArriving(directory.get()), system.executionContext());
    owned.wake(directory.get());
    system.scheduler().scheduleWithFixedDelay(Duration.ZERO, LogSweeper.SWEEP_EVERY,
        () -> sweeper.sweep(LogSweeper.askingMaster(master, system, settings.askTimeout())), blockingIo);

    Router router = new Router(system, directory, master, node.local(), NodePeers.start(system, settings.name()),
        settings.askTimeout(), settings.movedRetryFor(), new UnopenedTablets(node.local(), directory, storage,
            system.dispatchers().lookup(org.apache.pekko.actor.typed.DispatcherSelector.blocking()), master, system,
            settings.askTimeout()), config.getInt("tabula.node.location-cache-tablets"));
    NodeMetrics metrics = config.getBoolean("tabula.node.metrics") ? new NodeMetrics(engine, node.local(),
        () -> directory.get().tables().keySet(), MasterCounts.of(system), router.locations()) : null;
    ServerBinding binding = !config.getBoolean("tabula.node.serve-grpc") ? null
        : Starting.await(BigtableServices.bind(system, settings, security, router, master,
            table -> NodeShutdown.dropTable(system, tablets, engine, table, settings.askTimeout()),
            metrics == null ? null : metrics.grpc(), storage), wait, "binding the gRPC port");
    // Ready once Up, serving every tablet it owns, and past its warm-up (if it makes one).
    AtomicBoolean warm = new AtomicBoolean(false);
    TabulaRoutes.attach(system, new TabulaRoutes.NodeView(system, cluster, directory::get, directory::isMasters, master, () -> {
      int[] so = owned.servedOfOwned(directory.get());
      return warm.get() && cluster.selfMember().status() == MemberStatus.up() && so[0] == so[1];
    }, settings.askTimeout(), metrics, security.peerHttp()));
    int http = managementPort != 0 ? managementPort
        : Starting.await(ManagementHttp.start(system, settings.host(), settings.httpPort(), security), wait,
            "starting Management HTTP");
    NodeShutdown.registerUnbind(system, binding, metrics);
    NodeShutdown.registerDrain(system, cluster, settings, directory, master, engine);
    LogLossStop.watch(system, engine, logName, storage.whenSyncFailed());
    if (binding != null) {
      NodeWarmUp.run(system, settings.name(), loopback(binding), binding.localAddress().getPort(),
          config.getDuration("tabula.node.warm-up"), NodeWarmUp.placedOn(settings.name(), router.locations()),
          security::ownClient);
    }
    warm.set(true);
    LOG.info("Tabula node {} serving {} (Management HTTP on port {}, cluster port {}), data in {}, commit log logs/{}",
        settings.name(), binding == null ? "no gRPC endpoint (tabula.node.serve-grpc = off)"
            : "the Cloud Bigtable API on " + settings.host() + ":" + binding.localAddress().getPort(), http,
        cluster.selfMember().address().getPort().orElse(0), settings.dataDir(), logName);
    return new TabulaNode(system, settings, binding, http, directory, new TabulaTablets(router, master,
        settings.askTimeout()));
  }

  /** The address to reach {@code binding} from this machine: its own, or loopback for a wildcard. */
  private static String loopback(ServerBinding binding) {
    java.net.InetAddress a = binding.localAddress().getAddress();
    return a == null || a.isAnyLocalAddress() ? "127.0.0.1" : a.getHostAddress();
  }

  /** A name for this start of the node, never the same twice: the time in base 36 and 16 random bits. */
  private static String incarnation() {
    return Long.toString(System.currentTimeMillis(), 36) + "-"
        + HexFormat.of().toHexDigits((short) ThreadLocalRandom.current().nextInt());
  }

  /**
   * Joins the seed nodes of {@code --join} (or forms a cluster of its own without them) and
   * waits until this node is Up. Refuses to start if a node of the same name is already a
   * member: two nodes of one name would be given each other's tablets.
   */
  private static void joinCluster(ActorSystem<?> system, NodeSettings settings, Duration wait) {
    Cluster cluster = Cluster.get(system);
    if (settings.join().isEmpty()) {
      cluster.manager().tell(Join.create(cluster.selfMember().address()));
    } else {
      List<Address> seeds = new ArrayList<>();
      for (String seed : settings.join()) {
        int colon = seed.lastIndexOf(':');
        seeds.add(new Address("pekko", SYSTEM_NAME, seed.substring(0, colon), Integer.parseInt(seed.substring(colon + 1))));
      }
      cluster.manager().tell(new JoinSeedNodes(seeds));
    }
    awaitUp(system, "seeds " + settings.join(), wait);
    refuseDuplicateName(cluster, settings);
  }

  /**
   * Waits until this node is Up. Fails at once if its actor system began to shut down
   * meanwhile: with {@link ClusterJoinRefusedException} when the cluster refused it at join
   * (Pekko's configuration check, which compares the storage roots: {@link StorageRootCheck}).
   */
  private static void awaitUp(ActorSystem<?> system, String how, Duration wait) {
    Cluster cluster = Cluster.get(system);
    long deadline = System.nanoTime() + wait.toNanos();
    while (cluster.selfMember().status() != MemberStatus.up()) {
      java.util.Optional<CoordinatedShutdown.Reason> stopping = CoordinatedShutdown.get(system).getShutdownReason();
      if (stopping.isPresent()) {
        if (stopping.get() == CoordinatedShutdown.incompatibleConfigurationDetectedReason()) {
          throw new ClusterJoinRefusedException(StorageRootCheck.refusedAtJoin(system.settings().config(), how));
        }
        throw new IllegalStateException("did not join the cluster (" + how + "): the node began to shut down ("
            + stopping.get() + ")");
      }
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException("did not join the cluster (" + how + ") within " + wait);
      }
      sleep(50);
    }
  }

  private static void refuseDuplicateName(Cluster cluster, NodeSettings settings) {
    for (ClusterNodes.NodeInfo n : ClusterNodes.all(cluster)) {
      if (n.name().equals(settings.name()) && !n.address().equals(cluster.selfMember().address())
          && n.status() != MemberStatus.down() && n.status() != MemberStatus.removed()
          && n.status() != MemberStatus.exiting()) {
        throw new IllegalStateException("a node named " + settings.name() + " is already in the cluster, at "
            + n.address() + "; give this node another name (--node)");
      }
    }
  }

  private static void sleep(long ms) {
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while starting", e);
    }
  }

  /**
   * The master runs only while it holds the master lease (paper §5.2, the Chubby master
   * lock). Only the master: other singletons, such as sharding's coordinator, need none.
   */
  private static ClusterSingletonSettings masterSingletonSettings(ActorSystem<?> system) {
    java.time.Duration retry = system.settings().config().getDuration("pekko.cluster.singleton.lease-retry-interval");
    return ClusterSingletonSettings.create(system).withRole(ClusterNodes.ROLE).withLeaseSettings(new LeaseUsageSettings("tabula.master-lease",
        FiniteDuration.fromNanos(retry.toNanos())));
  }

  private static TableSchema schemaOf(Directory d, String table) {
    var t = d.table(table);
    return t == null ? TableSchema.of() : t.schema();
  }

  /**
   * Gives each tablet open in {@code engine} its table's schema in {@code d}, by its own table:
   * {@code d} may not show a tablet opening here yet (a split's half, one placed here since).
   */
  static void updateSchemas(TabletServer engine, Directory d) {
    Map<String, io.tabula.persistence.schema.TableSchema> schemas = new java.util.HashMap<>();
    for (Tablet t : engine.tablets()) {
      TableInfo table = d.table(t.table());
      if (table != null) {
        t.updateSchema(schemas.computeIfAbsent(t.table(), name -> table.schema()));
      }
    }
  }

  private static void awaitMaster(ActorSystem<?> system, DirectoryCache directory, ActorRef<Master.Command> master,
      Duration wait) {
    long deadline = System.nanoTime() + wait.toNanos();
    while (true) {
      try {
        directory.refresh(master, system, Duration.ofSeconds(3)).toCompletableFuture().get();
        return;
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException("interrupted while waiting for the master", e);
      } catch (java.util.concurrent.ExecutionException e) {
        if (System.nanoTime() > deadline) {
          throw new IllegalStateException("the master did not answer within " + wait + " (is another node holding"
              + " the master lease on this data directory?)", e.getCause());
        }
      }
    }
  }

  /**
   * A failure of background work: logged once with its stack, unless the log is lost (the
   * node logs that once itself, in {@link LogLossStop}).
   */
  private static void backgroundFailed(String what, Throwable failure) {
    if (LogLostException.in(failure)) {
      LOG.warn("{} stopped: {}", what, failure.getMessage());
    } else {
      LOG.error("{} failed", what, failure);
    }
  }

  /** The port the Cloud Bigtable gRPC API is bound to; IllegalStateException if the node serves none. */
  public int grpcPort() {
    if (grpc == null) {
      throw new IllegalStateException("node " + settings.name() + " serves no gRPC endpoint "
          + "(tabula.node.serve-grpc = off)");
    }
    return grpc.localAddress().getPort();
  }

  /** Reads and writes from inside this JVM, routed to each row's tablet wherever it is served. */
  public TabulaTablets tablets() {
    return tablets;
  }

  /** The port Management HTTP is bound to. */
  public int httpPort() {
    return httpPort;
  }

  public ActorSystem<?> system() {
    return system;
  }

  public NodeSettings settings() {
    return settings;
  }

  /** This node's copy of the master's directory, as it holds it now. */
  public Directory directory() {
    return directory.get();
  }

  /** Shuts the node down cleanly (coordinated shutdown: memtables flushed) and waits for it. */
  @Override
  public void close() {
    system.terminate();
    try {
      NodeShutdown.awaitStopped(system, Duration.ofSeconds(60));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
