package io.tabula.cluster;

import com.typesafe.config.Config;
import io.tabula.actors.journal.H2JournalImport;
import io.tabula.actors.journal.MasterJournals;
import io.tabula.actors.lease.FileLease;
import io.tabula.actors.lease.PostgresLease;
import io.tabula.actors.postgres.PostgresSchema;
import io.tabula.persistence.storage.Storage;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.Adapter;
import org.apache.pekko.cluster.typed.Cluster;
import org.apache.pekko.coordination.lease.javadsl.Lease;
import org.apache.pekko.coordination.lease.javadsl.LeaseProvider;
import org.apache.pekko.persistence.jdbc.testkit.javadsl.SchemaUtils;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The master's journal and lease as a node sets them up: on the storage root (the default,
 * fenced by the journal's epochs), or in PostgreSQL (fenced by the lease's row:
 * docs/fencing.md, "The master on PostgreSQL"); and the checks a start makes of them
 * ({@link #checkPlugins}, {@link #checkFenced}; docs/deploy.md, "Checked at start").
 */
final class MasterJournalSetup {
  private static final Logger LOG = LoggerFactory.getLogger(MasterJournalSetup.class);

  private MasterJournalSetup() {}

  /**
   * The settings a node derives for its journal and lease before its actor system starts: the
   * file lease's folder, the H2 journal's default URL, and the PostgreSQL journal's session
   * settings (its fence). Warns when the storage root is shared across machines but the lease
   * is not.
   */
  static Map<String, Object> derivedSettings(Config config, NodeSettings settings) {
    Map<String, Object> derived = new HashMap<>();
    derived.put("tabula.master-lease.lease-dir", settings.dataDir().toString());
    derived.put("pekko-persistence-jdbc.shared-databases.tabula.db.url", h2Url(config, settings));
    if (!config.getString("tabula.node.storage-uri").isBlank()
        && config.getString("tabula.master-lease.lease-class").equals(FileLease.class.getName())) {
      LOG.warn("the storage root is {} but the master lease is a file lease under {}, which only nodes on this "
          + "machine share: for nodes on several machines use config/hdfs-postgres.conf (PostgresLease) or "
          + "config/kubernetes.conf (docs/deploy.md)", config.getString("tabula.node.storage-uri"), settings.dataDir());
    }
    if (fencedByPostgres(config)) {
      derived.put("pekko-persistence-jdbc.shared-databases.tabula.db.connectionInitSql", journalSessionSql(settings));
    }
    return derived;
  }

  /**
   * The name Pekko's singleton manager gives the master's lease: after the actor system and
   * the manager's own path.
   */
  private static String masterLeaseName(String systemName) {
    return systemName + "-singleton-pekko://" + systemName + "/system/singletonManagermaster";
  }

  /**
   * The journal plugins the master can run on (files on the storage root, or
   * pekko-persistence-jdbc), each with the snapshot store that goes with it.
   */
  private static final Map<String, String> SNAPSHOTS_OF_JOURNAL = Map.of(
      "tabula.master-journal", "tabula.master-snapshots", "jdbc-journal", "jdbc-snapshot-store");

  /** The master's journal plugin, {@code tabula.master.journal-plugin}. */
  static String journalPlugin(Config c) {
    return c.getString("tabula.master.journal-plugin");
  }

  /**
   * Refuses a start whose master would not run on one of Tabula's journals (with its snapshot
   * store), or whose actor system's default journal or snapshot store is one of the master's.
   * The defaults serve every persistent actor that names no plugin of its own, such as an
   * embedding application's: its recovery through the master's journal would open the journal
   * as a new epoch and fence the running master (on a node without the lease it would fail).
   * Earlier versions of a node's settings (and of config/postgres.conf) set the default to the
   * master's journal: the message says where that setting went.
   */
  static void checkPlugins(Config c) {
    String journal = journalPlugin(c);
    String snapshots = c.getString("tabula.master.snapshot-plugin");
    if (!snapshots.equals(SNAPSHOTS_OF_JOURNAL.get(journal))) {
      throw new StartRefusedException(StartRefusedException.Reason.MASTER_JOURNAL, "tabula.master.journal-plugin "
          + "and snapshot-plugin are \"" + journal + "\" and \"" + snapshots + "\": they must be Tabula's, as every "
          + "node of the cluster has them: \"tabula.master-journal\" and \"tabula.master-snapshots\" (the default, on "
          + "the storage root) or \"jdbc-journal\" and \"jdbc-snapshot-store\" (config/postgres.conf)");
    }
    for (String key : List.of("pekko.persistence.journal.plugin", "pekko.persistence.snapshot-store.plugin")) {
      String plugin = c.getString(key);
      if (SNAPSHOTS_OF_JOURNAL.containsKey(plugin) || SNAPSHOTS_OF_JOURNAL.containsValue(plugin)) {
        throw new StartRefusedException(StartRefusedException.Reason.MASTER_JOURNAL, key + " is \"" + plugin
            + "\", a plugin of the master's: a persistent actor with no journal of its own would recover through "
            + "it, opening the master's journal as a new epoch and fencing the running master. The master names "
            + "its journal itself: set tabula.master.journal-plugin and snapshot-plugin instead (config/postgres.conf "
            + "does), and leave the actor system's defaults unset or to the application's own journal");
      }
    }
  }

  /**
   * Refuses the master's journal on pekko-persistence-jdbc with a database other than
   * PostgreSQL (H2, the default url; MySQL...) for a node that can be in a cluster, unless
   * {@code tabula.master.allow-unfenced-journal} is on. Only PostgreSQL gets a fence (the
   * lease's row, checked by a trigger: docs/fencing.md, "The master on PostgreSQL"); on any
   * other database a master that lost its lease but has not noticed yet still writes, so one
   * master at a time would rest on the lease's timing alone.
   */
  static void checkFenced(Config c, NodeSettings s) {
    String url = c.getString("pekko-persistence-jdbc.shared-databases.tabula.db.url");
    if (!journalPlugin(c).equals("jdbc-journal") || url.startsWith("jdbc:postgresql:")
        || c.getBoolean("tabula.master.allow-unfenced-journal") || !canBeInACluster(c, s)) {
      return;
    }
    String[] scheme = url.split(":", 3); // jdbc:<database>:..., named without its address or credentials
    throw new StartRefusedException(StartRefusedException.Reason.UNFENCED_JOURNAL, "the master's journal is "
        + "pekko-persistence-jdbc on " + (scheme.length > 1 ? "a " + scheme[1] + " database" : "a database other than "
        + "PostgreSQL") + ", which Tabula cannot fence: a master that "
        + "lost its lease could still write to it, with only the lease's timing to keep two masters apart, and "
        + "this node can be in a cluster (it joins seeds, joins by bootstrap or listens on a fixed cluster port). "
        + "Keep the master's journal on the storage root (the default, fenced by its epochs) or in PostgreSQL "
        + "(config/postgres.conf), or set tabula.master.allow-unfenced-journal = on to accept the risk");
  }

  /**
   * Whether other nodes can be members of this node's cluster: it joins seeds (its own or
   * Pekko's), finds its cluster by bootstrap, or listens on a fixed cluster port that others
   * can be told to join. A node on a port picked at random that joins nobody forms a cluster
   * no other node is told of.
   */
  private static boolean canBeInACluster(Config c, NodeSettings s) {
    return !s.join().isEmpty() || c.getString("tabula.node.join-by").equals("bootstrap")
        || !c.getStringList("pekko.cluster.seed-nodes").isEmpty() || s.clusterPort() != 0;
  }

  /** Whether the master's journal is in PostgreSQL and fenced by a {@link PostgresLease} master lease. */
  private static boolean fencedByPostgres(Config c) {
    return journalPlugin(c).equals("jdbc-journal")
        && c.getString("pekko-persistence-jdbc.shared-databases.tabula.db.url").startsWith("jdbc:postgresql:")
        && c.getString("tabula.master-lease.lease-class").equals(PostgresLease.class.getName());
  }

  /**
   * What each journal connection runs when it opens: it names the lease and the owner it
   * writes for, which the journal's fence checks (tabula-schema.sql), and ends any transaction
   * left open for 5 s, so a master frozen in the middle of one does not hold the lease's row
   * lock (and with it the next master's taking of the lease) for ever. The owner is the node's
   * cluster address as Pekko's singleton manager gives it to the lease, so the port must be
   * known before the node starts.
   */
  private static String journalSessionSql(NodeSettings s) {
    if (s.clusterPort() == 0) {
      throw new IllegalArgumentException("tabula.node.cluster-port must be set (not 0) when the master's journal "
          + "and lease are in PostgreSQL: the journal's fence names each node by its cluster address");
    }
    return "SELECT set_config('tabula.lease', " + sqlString(masterLeaseName(TabulaNode.SYSTEM_NAME)) + ", false), "
        + "set_config('tabula.owner', " + sqlString(masterLeaseOwner(s)) + ", false), "
        + "set_config('idle_in_transaction_session_timeout', '5s', false), "
        + "set_config('application_name', " + sqlString("tabula journal " + masterLeaseOwner(s)) + ", false)";
  }

  private static String masterLeaseOwner(NodeSettings s) {
    return TabulaNode.SYSTEM_NAME + "@" + s.host() + ":" + s.clusterPort();
  }

  private static String sqlString(String v) {
    return "'" + v.replace("'", "''") + "'";
  }

  /**
   * The master's journal: the configured url, or by default an H2 file under the data
   * directory in H2's automatic mixed mode, so whichever node runs the master opens it and
   * serves it to the others (TCP on the node's host), and the next node to open it after
   * that one stops takes over. {@code WRITE_DELAY=0}: a commit reaches the file before the
   * master goes on (H2 otherwise writes up to a second later), so what the master answered
   * survives the process being killed; tablets take writes only after the master recorded
   * where their log is.
   */
  private static String h2Url(Config c, NodeSettings s) {
    String url = c.getString("pekko-persistence-jdbc.shared-databases.tabula.db.url");
    if (!url.isEmpty()) {
      return url;
    }
    return "jdbc:h2:file:" + s.dataDir().resolve("master").resolve("journal") + ";AUTO_SERVER=TRUE;AUTO_RECONNECT=TRUE;WRITE_DELAY=0";
  }

  /**
   * Readies the master's journal before the master can start: on the storage root (the
   * default), it opens only while this node holds the master lease, and a journal an earlier
   * version kept in H2 is imported first; with pekko-persistence-jdbc, its tables are created.
   */
  static void prepare(ActorSystem<?> system, Config config, NodeSettings settings, Storage storage,
      Duration wait) {
    if (journalPlugin(config).equals("jdbc-journal")) {
      Config db = config.getConfig("pekko-persistence-jdbc.shared-databases.tabula.db");
      if (db.getString("url").startsWith("jdbc:postgresql:")) {
        if (!fencedByPostgres(config)) {
          throw new IllegalArgumentException("the master's journal is in PostgreSQL but the master lease is "
              + config.getString("tabula.master-lease.lease-class") + ": the journal is fenced by the lease's row, so "
              + "set tabula.master-lease.lease-class to " + PostgresLease.class.getName() + " (config/postgres.conf "
              + "does), or keep the journal on the storage root");
        }
        createPostgresSchema(db);
        String owner = masterLease(system).getSettings().ownerName();
        if (!owner.equals(masterLeaseOwner(settings))) {
          throw new IllegalStateException("the master lease's owner is " + owner + " but the journal's fence was "
              + "given " + masterLeaseOwner(settings) + ": set tabula.node.host to the address the node binds");
        }
      } else {
        Starting.await(SchemaUtils.createIfNotExists(system), wait, "creating the master's journal tables");
      }
      return;
    }
    Lease lease = masterLease(system);
    MasterJournals.get(Adapter.toClassic(system)).use(storage, lease::checkLease);
    try {
      H2JournalImport.importIfPresent(settings.dataDir(), storage, config.getString("tabula.master-journal.dir"), wait);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while importing the master's H2 journal", e);
    }
  }

  /** Creates whatever of Tabula's PostgreSQL schema is missing (journal, leases, fence). */
  private static void createPostgresSchema(Config db) {
    java.util.Properties login = new java.util.Properties();
    login.setProperty("user", db.getString("user"));
    login.setProperty("password", db.getString("password"));
    login.setProperty("connectTimeout", "10");
    try (java.sql.Connection c = java.sql.DriverManager.getConnection(db.getString("url"), login)) {
      PostgresSchema.ensure(c);
    } catch (java.sql.SQLException e) {
      throw new IllegalStateException("cannot create Tabula's tables in " + db.getString("url") + ": "
          + e.getMessage(), e);
    }
  }

  /**
   * The very lease instance the master's singleton manager takes: Pekko's lease provider keeps
   * one per (name, config, owner), and the manager names it after the actor system and its own
   * path, with this node's address as the owner.
   */
  static Lease masterLease(ActorSystem<?> system) {
    return LeaseProvider.get(system).getLease(masterLeaseName(system.name()), "tabula.master-lease",
        Cluster.get(system).selfMember().address().hostPort());
  }
}
