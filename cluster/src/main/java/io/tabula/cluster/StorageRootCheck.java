package io.tabula.cluster;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigObject;
import com.typesafe.config.ConfigUtil;
import com.typesafe.config.ConfigValueType;
import io.tabula.persistence.storage.StorageProbe;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;
import org.apache.pekko.cluster.ConfigValidation;
import org.apache.pekko.cluster.Invalid;
import org.apache.pekko.cluster.JoinConfigCompatChecker;
import org.apache.pekko.cluster.Valid;

/**
 * Pekko's join-time configuration check for the storage root (docs/deploy.md, "One shared
 * storage root"): a node may join a cluster only if it sees the same storage as the member it
 * asks, which is the cluster's. Two things are checked:
 * <ol>
 *   <li>The root's identity ({@link io.tabula.persistence.storage.RootIdentity}), which each
 *       node puts in its configuration before its actor system starts ({@link
 *       StorageRoots#identitySettings}): another id, or none, is another root.
 *   <li>A probe ({@link StorageProbe}): the joining node writes a file with a random nonce
 *       on its root and puts its name and nonce in its configuration; the member reads that
 *       file on its own root and finds that nonce, or refuses. The same id does not show the
 *       same storage: a copy of the root ({@code cp -a} of a data folder, a VM image, a
 *       restored volume snapshot) carries the id with it, and a node started on a copy would
 *       open tablets from stale files and write its log where no recovery looks.
 * </ol>
 * Nodes on different storage would each open the other's tablets from files that are not
 * there or not current, and fence logs that are not there, losing rows silently.
 *
 * <p>How Pekko runs it ({@code pekko.cluster.configuration-compatibility-check}): a node that
 * joins through seed nodes (Tabula's {@code --join}, Pekko's {@code seed-nodes}, the cluster
 * bootstrap) sends the keys below to a member, which checks them against its own config
 * ({@code check(joining node's keys, member's config)}, on the member's cluster daemon: the
 * probe is read there, on the member's root, with a time limit). The member answers with its
 * own values of the keys the joining node sent, and the joining node checks those against its
 * own config in turn. A probe's key names the joining node's life, which no member has, so
 * that answer carries no probe, and the joining node checks the ids alone: the probe is
 * checked where it proves something, by the member, whose root is the cluster's. (A joining
 * node of a version before probes sends none either, and is checked by its id alone.)
 *
 * <p>A refusal ("incompatible") is logged by the member with this check's message (both roots
 * named) as {@code Found incompatible settings when [address] tried to join: ...}; the joining
 * node is told no more than that, logs {@code Couldn't join seed nodes because of incompatible
 * cluster configuration}, and runs its coordinated shutdown, so it never becomes a member and
 * no tablet or master can move to it. The joining node's own error names its root ({@link
 * #refusedAtJoin}). Pekko enforces the refusal only while {@code enforce-on-join} is on, its
 * default, which Tabula nodes must keep.
 *
 * <p>Made by Pekko through its public no-argument constructor. Stateless.
 */
public final class StorageRootCheck extends JoinConfigCompatChecker {
  /** The storage root's identity, a UUID; set by the node, never by an operator. */
  static final String ID = "tabula.storage-root.id";
  /** The storage root as its operator named it: the data directory's path, or the HDFS URI. */
  static final String NAME = "tabula.storage-root.name";
  /** The node's probe of its root: one key, the probe's name (the node's life), whose value is the nonce. */
  static final String PROBES = "tabula.storage-root.probes";
  /** Where Pekko finds this check: a named entry of its checkers. */
  static final String CHECKER_KEY = "pekko.cluster.configuration-compatibility-check.checkers.tabula-storage-root";
  /** How long the member waits for the storage to answer whether the joining node's probe is there. */
  static final Duration PROBE_WAIT = Duration.ofSeconds(10);

  private static final String SHARED_ROOT = "Every node of a cluster must use one shared storage root: the same "
      + "--data folder for nodes on one machine, or HDFS or a shared POSIX file system for nodes on several, never "
      + "a copy of it (docs/deploy.md, \"One shared storage root\")";

  public StorageRootCheck() {}

  @Override
  public scala.collection.immutable.Seq<String> requiredKeys() {
    return scala.jdk.javaapi.CollectionConverters.asScala(List.of(ID, NAME, PROBES)).toList();
  }

  /** The configuration key of the probe of life {@code life} ({@link #PROBES}). */
  static String probeKey(String life) {
    return PROBES + "." + ConfigUtil.quoteString(life);
  }

  /**
   * {@code toCheck} holds the other node's keys (the joining node's, when a member checks; the
   * member's answer, when the joining node checks), {@code actualConfig} this node's
   * configuration.
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
    if (!other.equals(own)) {
      return invalid("the nodes see different storage roots: the other node's is " + root(toCheck) + ", this "
          + "node's is " + root(actualConfig) + ". " + SHARED_ROOT + ". The node that joins is refused, so no "
          + "tablet moves to a root that does not hold it");
    }
    for (Map.Entry<String, String> probe : probes(toCheck).entrySet()) {
      String refused = probeRefusal(probe.getKey(), probe.getValue(), toCheck, actualConfig);
      if (refused != null) {
        return invalid(refused);
      }
    }
    return Valid.getInstance();
  }

  /** Why the probe {@code name} with nonce {@code nonce} shows no shared storage, or null if it does. */
  private static String probeRefusal(String name, String nonce, Config toCheck, Config actualConfig) {
    String seen = "the other node's storage root " + root(toCheck) + " has this cluster's identity, but this node, "
        + "on " + root(actualConfig) + ", ";
    UUID expected;
    try {
      expected = UUID.fromString(nonce);
    } catch (IllegalArgumentException e) {
      expected = null;
    }
    if (expected == null || !StorageProbe.isName(name)) {
      return seen + "cannot look for its probe: its name '" + name + "' or nonce '" + nonce + "' is malformed. "
          + SHARED_ROOT;
    }
    StorageRoots.ProbeLook look = StorageRoots.lookForProbe(actualConfig, name, expected, PROBE_WAIT);
    String file = StorageProbe.FOLDER + "/" + name;
    return switch (look.seen()) {
      case SAME -> null;
      case MISSING, OTHER -> seen + (look.seen() == StorageRoots.ProbeSeen.MISSING ? "does not find" : "finds another "
          + "nonce in") + " the probe " + file + " the other node wrote on its root just now: the two do not see the "
          + "same storage. The other node's root is a copy of this one (a data folder copied with its ROOT-ID, a VM "
          + "image, a restored volume snapshot), or another file system given a copy of ROOT-ID; tablets moved "
          + "there would open from stale files, and the writes it acknowledged would be lost. " + SHARED_ROOT
          + ". The node that joins is refused";
      case UNREADABLE -> seen + "could not read the probe " + file + " the other node wrote (" + look.why() + "), so "
          + "the two are not shown to see the same storage. " + SHARED_ROOT + ". The node that joins is refused; it "
          + "may try again";
    };
  }

  /** The probes in {@code c} ({@link #PROBES}): name to nonce. */
  private static Map<String, String> probes(Config c) {
    Map<String, String> out = new TreeMap<>();
    if (c.hasPath(PROBES) && c.getValue(PROBES).valueType() == ConfigValueType.OBJECT) {
      ConfigObject o = c.getObject(PROBES);
      o.forEach((name, v) -> out.put(name, String.valueOf(v.unwrapped())));
    }
    return out;
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
        + "root (the same id, and a probe this node wrote on its root found by the member on the cluster's, which "
        + "a copy of the root does not pass). This node's storage root is " + root(config) + "; the member that "
        + "refused it names the cluster's in its log (\"Found incompatible settings when [...] tried to join\"). "
        + SHARED_ROOT + ". Do not turn pekko.cluster.configuration-compatibility-check.enforce-on-join off to get "
        + "past this: a node on another root, or a copy of it, finds none of the cluster's current tablets, logs "
        + "or master journal there";
  }

  /** A node's root as the refusals name it: "/var/lib/tabula (root id 5b0c...)". */
  private static String root(Config c) {
    return value(c, NAME) + " (root id " + value(c, ID) + ")";
  }

  private static String value(Config c, String key) {
    return c.hasPath(key) ? c.getString(key).trim() : "";
  }

  private static ConfigValidation invalid(String message) {
    return new Invalid(scala.jdk.javaapi.CollectionConverters.asScala(List.of(ID + ": " + message)).toList());
  }
}
