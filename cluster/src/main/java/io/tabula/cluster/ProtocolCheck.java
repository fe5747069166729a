package io.tabula.cluster;

import com.typesafe.config.Config;
import java.util.List;
import org.apache.pekko.cluster.ConfigValidation;
import org.apache.pekko.cluster.Invalid;
import org.apache.pekko.cluster.JoinConfigCompatChecker;
import org.apache.pekko.cluster.Valid;

/**
 * Pekko's join-time configuration check of what Tabula's nodes say to each other: a node may
 * join a cluster only if it speaks the members' version of Tabula's internal protocol. That
 * version covers every message between nodes (Kryo's registrations and the fields of each
 * message, the directory's changes and their digest), the directory's digest itself, and the
 * number of sharding entity types the tablets are spread over ({@code TabletShards}): a node
 * that differs in any of them would misread the others' messages, or route a tablet to an
 * entity type the others do not host. Nothing else checked this: a node of another build
 * joined and failed in ways far from the cause.
 *
 * <p>{@link #VERSION} is set by the node in its configuration (never by an operator) and is
 * raised with any change to those; a cluster moves to a new version by being stopped whole and
 * started again (docs/deploy.md). Pekko runs the check as for {@link StorageRootCheck}: the
 * member checks the joining node's key, the joining node the member's answer, and a refused
 * node never becomes a member and runs its coordinated shutdown.
 *
 * <p>Made by Pekko through its public no-argument constructor. Stateless.
 */
public final class ProtocolCheck extends JoinConfigCompatChecker {
  /**
   * The version of Tabula's internal protocol. 1: nodes before this check (no key). 2: the
   * directory's changes carry its digest, and the master is reached through {@code MasterProxy}.
   * 3: a tablet's open and close reports carry the opening's number. 4: nodes look tablets up
   * from the master ({@code Master.Locate}). 5: nodes ask the master which of their old logs a
   * placement names ({@code Master.NamedLogs}). 6: the directory's changes carry what a node
   * holding only its share needs ({@code DirectoryFeed.Shares}), and a node asks for its share.
   * 7: tables carry their IAM policy and authorized views ({@code TableAccess}), changed by
   * {@code Master.ChangeAccess}. 8: tables carry their options ({@code TableOptions}: deletion
   * protection, change-stream retention; form 3 of their bytes), changed by {@code
   * Master.ChangeOptions}; backups list tablets ({@code TabletActor.ListForBackup}) and restore
   * tables ({@code Master.CreateRestoredTable}). 9: families may be aggregate families (tables'
   * bytes in form 4, {@code Master.FamiliesSet}, an aggregator in {@code FamilyChange} and the
   * table commands), and mutations carry {@code AddToCell} and {@code MergeToCell}. 10: change
   * streams read a tablet's changes ({@code TabletActor.ReadChanges}, answered with {@code
   * TabletChangeReads.ChangesRead} of {@code Change}s).
   */
  static final int VERSION = 10;
  /** The node's protocol version; set by the node, never by an operator. */
  static final String KEY = "tabula.cluster.protocol";
  /** Where Pekko finds this check: a named entry of its checkers. */
  static final String CHECKER_KEY = "pekko.cluster.configuration-compatibility-check.checkers.tabula-protocol";

  public ProtocolCheck() {}

  @Override
  public scala.collection.immutable.Seq<String> requiredKeys() {
    return scala.jdk.javaapi.CollectionConverters.asScala(List.of(KEY)).toList();
  }

  /** {@code toCheck} holds the other node's keys, {@code actualConfig} this node's configuration. */
  @Override
  public ConfigValidation check(Config toCheck, Config actualConfig) {
    String other = value(toCheck);
    String own = value(actualConfig);
    if (other.equals(own)) {
      return Valid.getInstance();
    }
    return new Invalid(scala.jdk.javaapi.CollectionConverters.asScala(List.of(KEY + ": the other node speaks "
        + describe(other) + " of Tabula's internal protocol, this node " + describe(own) + ": nodes of different "
        + "versions misread each other's messages and place tablets differently. Every node of a cluster runs one "
        + "version of Tabula; a cluster moves to another by being stopped whole and started again on it "
        + "(docs/deploy.md). The node that joins is refused")).toList());
  }

  private static String describe(String version) {
    return version.isEmpty() ? "version 1 (a Tabula from before this check, which sends no " + KEY + ")"
        : "version " + version;
  }

  private static String value(Config c) {
    return c.hasPath(KEY) ? c.getString(KEY).trim() : "";
  }
}
