package io.tabula.actors.master;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import org.apache.pekko.actor.Address;
import org.apache.pekko.cluster.Member;
import org.apache.pekko.cluster.MemberStatus;
import org.apache.pekko.cluster.typed.Cluster;

/**
 * Tabula nodes as cluster members. A node states its name and endpoints in its member roles
 * ({@link #roles}), which every member sees with the membership itself, so no node has to
 * ask another who it is and the answer is never older than the membership.
 */
public final class ClusterNodes {
  private static final String NAME = "tabula-node:";
  private static final String GRPC = "tabula-grpc:";
  private static final String HTTP = "tabula-http:";
  private static final String LOG = "tabula-log:";
  /**
   * The role every Tabula node has: the master's singleton and the tablets' sharding run on
   * members with it only, so an application's members without a node never host them.
   */
  public static final String ROLE = "tabula";

  private ClusterNodes() {}

  /**
   * A node as the membership shows it.
   *
   * @param uid which start of the node this member is (a node started again at the same
   *     address is another member, with another uid)
   * @param grpc the {@code host:port} of its Cloud Bigtable API
   * @param http the {@code host:port} of its Management HTTP
   * @param reachable false when some member's failure detector finds it unreachable
   */
  public record NodeInfo(String name, Address address, long uid, String grpc, String http, String log,
      MemberStatus status, boolean reachable) {
    /** Up: serving, and a place for tablets. */
    public boolean up() {
      return status == MemberStatus.up();
    }
  }

  /**
   * The roles a node named {@code name} joins with, its name's first; {@code log} is the
   * commit-log folder of this start of the node.
   */
  public static List<String> roles(String name, String grpc, String http, String log) {
    return List.of(NAME + name, GRPC + grpc, HTTP + http, LOG + log, ROLE);
  }

  /** The commit-log folder named by a node's roles ({@link #roles}), or empty if they name none. */
  public static Optional<String> logOf(java.util.Collection<String> roles) {
    return roles.stream().filter(r -> r.startsWith(LOG)).map(r -> r.substring(LOG.length())).findFirst();
  }

  /** The node a member is, if it is a Tabula node (taken as reachable). */
  public static Optional<NodeInfo> of(Member m) {
    return of(m, true);
  }

  private static Optional<NodeInfo> of(Member m, boolean reachable) {
    String name = null;
    String grpc = "";
    String http = "";
    String log = "";
    for (String r : m.getRoles()) {
      if (r.startsWith(NAME)) {
        name = r.substring(NAME.length());
      } else if (r.startsWith(GRPC)) {
        grpc = r.substring(GRPC.length());
      } else if (r.startsWith(HTTP)) {
        http = r.substring(HTTP.length());
      } else if (r.startsWith(LOG)) {
        log = r.substring(LOG.length());
      }
    }
    return name == null ? Optional.empty() : Optional.of(new NodeInfo(name, m.address(), m.uniqueAddress().longUid(), grpc,
        http, log, m.status(), reachable));
  }

  /** Every Tabula node in the membership (any status, with its reachability), by name. */
  public static List<NodeInfo> all(Cluster cluster) {
    List<NodeInfo> out = new ArrayList<>();
    java.util.Set<Member> unreachable = cluster.state().getUnreachable();
    for (Member m : cluster.state().getMembers()) {
      of(m, !unreachable.contains(m)).ifPresent(out::add);
    }
    out.sort(Comparator.comparing(NodeInfo::name));
    return out;
  }

  /** The names of the nodes that are Up, sorted. */
  public static List<String> upNames(Cluster cluster) {
    return all(cluster).stream().filter(NodeInfo::up).map(NodeInfo::name).toList();
  }
}
