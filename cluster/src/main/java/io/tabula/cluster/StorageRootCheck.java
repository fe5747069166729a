package io.tabula.cluster;

import com.typesafe.config.Config;
import java.util.List;
import org.apache.pekko.cluster.ConfigValidation;
import org.apache.pekko.cluster.Invalid;
import org.apache.pekko.cluster.JoinConfigCompatChecker;
import org.apache.pekko.cluster.Valid;

/**
 * Pekko's join-time configuration check for the storage root (docs/deploy.md, "One shared
 * storage root"): a node may join a cluster only if it sees the same storage root, told by the
 * root's identity ({@link io.tabula.persistence.storage.RootIdentity}), which each node puts in
 * its configuration before its actor system starts ({@link StorageRoots#identitySettings}).
 * Nodes on different roots would each open the other's tablets empty and fence logs that are
 * not there, losing every row silently.
 *
 * <p>How Pekko runs it ({@code pekko.cluster.configuration-compatibility-check}): a node that
 * joins through seed nodes (Tabula's {@code --join}, Pekko's {@code seed-nodes}, the cluster
 * bootstrap) sends the keys below to a member, which checks them against its own. Another
 * root, or none, is answered "incompatible": the member logs this check's message (both roots
 * named) as {@code Found incompatible settings when [address] tried to join: ...}, and the
 * joining node is told no more than that, logs {@code Couldn't join seed nodes because of
 * incompatible cluster configuration}, and runs its coordinated shutdown, so it never becomes
 * a member and no tablet or master can move to it. The joining node's own error names its
 * root ({@link #refusedAtJoin}). Pekko enforces the refusal only while
 * {@code enforce-on-join} is on, its default, which Tabula nodes must keep.
 *
 * <p>Made by Pekko through its public no-argument constructor. Stateless.
 */
public final class StorageRootCheck extends JoinConfigCompatChecker {
  /** The storage root's identity, a UUID; set by the node, never by an operator. */
  static final String ID = "tabula.storage-root.id";
  /** The storage root as its operator named it: the data directory's path, or the HDFS URI. */
  static final String NAME = "tabula.storage-root.name";
  /** Where Pekko finds this check: a named entry of its checkers. */
  static final String CHECKER_KEY = "pekko.cluster.configuration-compatibility-check.checkers.tabula-storage-root";

  private static final String SHARED_ROOT = "Every node of a cluster must use one shared storage root: the same "
      + "--data folder for nodes on one machine, or HDFS or a shared POSIX file system for nodes on several "
      + "(docs/deploy.md, \"One shared storage root\")";

  public StorageRootCheck() {}

  @Override
  public scala.collection.immutable.Seq<String> requiredKeys() {
    return scala.jdk.javaapi.CollectionConverters.asScala(List.of(ID, NAME)).toList();
  }

  /**
   * {@code toCheck} holds the other node's keys (the joining node's, when a member checks),
   * {@code actualConfig} this node's configuration.
   */
  @Override
  public ConfigValidation check(Config toCheck, Config actualConfig) {
    String other = value(toCheck, ID);
    String own = value(actualConfig, ID);
    if (other.isEmpty() || own.isEmpty()) {
      return invalid((other.isEmpty() ? "the other node" : "this node") + " has no storage root identity ("
          + ID + "): a Tabula node from before root identities, or an actor system not created with "
          + "TabulaNode.embeddedConfig. " + SHARED_ROOT + "; a cluster of nodes from before root identities is "
          + "stopped whole, then started again on this version");
    }
    if (other.equals(own)) {
      return Valid.getInstance();
    }
    return invalid("the nodes see different storage roots: the other node's is " + value(toCheck, NAME)
        + " (root id " + other + "), this node's is " + value(actualConfig, NAME) + " (root id " + own + "). "
        + SHARED_ROOT + ". The node that joins is refused, so no tablet moves to a root that does not hold it");
  }

  /**
   * The error of a node whose join was refused by Pekko's configuration check: the member it
   * asked logged why, and this node knows only its own root, which it names.
   *
   * @param config this node's configuration
   * @param how how it joined (its seed nodes)
   */
  static String refusedAtJoin(Config config, String how) {
    return "the cluster (" + how + ") refused this node at join: Pekko's join-time configuration check found its "
        + "configuration incompatible, and the check Tabula adds there is that every node sees the same storage "
        + "root. This node's storage root is " + value(config, NAME) + " (root id " + value(config, ID) + "); the "
        + "member that refused it names the cluster's in its log (\"Found incompatible settings when [...] tried "
        + "to join\"). " + SHARED_ROOT + ". Do not turn pekko.cluster.configuration-compatibility-check"
        + ".enforce-on-join off to get past this: a node on another root finds none of the cluster's tablets, logs "
        + "or master journal there";
  }

  private static String value(Config c, String key) {
    return c.hasPath(key) ? c.getString(key).trim() : "";
  }

  private static ConfigValidation invalid(String message) {
    return new Invalid(scala.jdk.javaapi.CollectionConverters.asScala(List.of(ID + ": " + message)).toList());
  }
}
