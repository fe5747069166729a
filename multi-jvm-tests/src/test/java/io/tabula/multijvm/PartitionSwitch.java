package io.tabula.multijvm;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashSet;
import java.util.Set;
import org.apache.pekko.actor.AbstractExtensionId;
import org.apache.pekko.actor.Address;
import org.apache.pekko.actor.ExtendedActorSystem;
import org.apache.pekko.actor.Extension;
import org.apache.pekko.actor.ExtensionIdProvider;
import org.apache.pekko.cluster.Cluster;
import org.apache.pekko.cluster.Member;
import org.apache.pekko.remote.RemoteActorRefProvider;
import org.apache.pekko.remote.transport.ThrottlerTransportAdapter;

/**
 * Test-only: cuts the node it runs in off the other nodes' remoting traffic (both ways) while
 * a file named {@code partition-<node name>} exists beside the data directory, and lets the
 * traffic through again once the file is gone. Only the cluster transport is cut: the node's
 * gRPC clients still reach it, as in a network partition between the nodes.
 *
 * <p>It uses Pekko Artery's own test hook, the blackhole of its test mode
 * ({@code pekko.remote.artery.advanced.test-mode = on}), the mechanism Pekko's multi-node
 * test kit uses. Network namespaces would cut real packets but need privileges and veth
 * plumbing per node; the blackhole drops every message to and from the chosen addresses
 * inside Artery's streams, which is what the other nodes observe of a partition. A node runs
 * it through {@code pekko.extensions}; the node JVMs have the test classes on their class
 * path.
 */
public final class PartitionSwitch implements Extension {
  /** The extension's id, looked up by Pekko from {@code pekko.extensions}. */
  public static final class Id extends AbstractExtensionId<PartitionSwitch> implements ExtensionIdProvider {
    public static final Id INSTANCE = new Id();

    @Override
    public PartitionSwitch createExtension(ExtendedActorSystem system) {
      return new PartitionSwitch(system);
    }

    @Override
    public Id lookup() {
      return INSTANCE;
    }
  }

  /** The file, beside the data directory, whose presence cuts node {@code node} off. */
  static Path switchFile(Path dataDir, String node) {
    return dataDir.toAbsolutePath().resolveSibling("partition-" + node);
  }

  // Owned by the scheduler's task (one at a time).
  private final Set<Address> cut = new HashSet<>();

  private PartitionSwitch(ExtendedActorSystem system) {
    Path file = switchFile(Path.of(system.settings().config().getString("tabula.node.data-dir")),
        system.settings().config().getString("tabula.node.name"));
    Object both = scalaObject("org.apache.pekko.remote.transport.ThrottlerTransportAdapter$Direction$Both$");
    Object blackhole = scalaObject("org.apache.pekko.remote.transport.ThrottlerTransportAdapter$Blackhole$");
    Object unthrottled = scalaObject("org.apache.pekko.remote.transport.ThrottlerTransportAdapter$Unthrottled$");
    var transport = ((RemoteActorRefProvider) system.provider()).transport();
    system.scheduler().scheduleWithFixedDelay(Duration.ofMillis(100), Duration.ofMillis(100), () -> {
      Cluster cluster = Cluster.get(system);
      if (Files.exists(file)) {
        for (Member m : cluster.state().getMembers()) {
          Address a = m.address();
          if (!a.equals(cluster.selfAddress()) && cut.add(a)) {
            transport.managementCommand(new ThrottlerTransportAdapter.SetThrottle(a,
                (ThrottlerTransportAdapter.Direction) both, (ThrottlerTransportAdapter.ThrottleMode) blackhole));
            system.log().warning("test partition: remoting traffic to and from {} is dropped", a);
          }
        }
      } else if (!cut.isEmpty()) {
        for (Address a : cut) {
          transport.managementCommand(new ThrottlerTransportAdapter.SetThrottle(a,
              (ThrottlerTransportAdapter.Direction) both, (ThrottlerTransportAdapter.ThrottleMode) unthrottled));
        }
        system.log().warning("test partition healed: remoting traffic to and from {} flows again", cut);
        cut.clear();
      }
    }, system.dispatcher());
  }

  private static Object scalaObject(String className) {
    try {
      return Class.forName(className).getField("MODULE$").get(null);
    } catch (ReflectiveOperationException e) {
      throw new IllegalStateException("Pekko's test transport is missing " + className, e);
    }
  }
}
