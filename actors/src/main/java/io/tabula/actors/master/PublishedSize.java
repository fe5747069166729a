package io.tabula.actors.master;

import io.tabula.protocol.errors.ErrorCode;
import io.tabula.protocol.errors.Refusal;
import java.util.List;
import org.apache.pekko.actor.typed.ActorSystem;

/** Whether the directory still fits the message every change publishes to the other nodes. */
final class PublishedSize {
  private PublishedSize() {}

  /**
   * RESOURCE_EXHAUSTED if the cluster has other nodes and the directory after {@code events}
   * would not fit the message every change publishes to them: the directory travels whole, in
   * one message of at most three quarters of {@code pekko.remote.artery.advanced.maximum-frame-size}
   * (docs/cluster.md, "Limits"). A node alone publishes to itself only, without a size limit.
   */
  static Refusal refuse(ActorSystem<?> system, int clusterSize, Directory d, List<Master.Event> events, int newTablets) {
    if (clusterSize <= 1) {
      return null;
    }
    long limit = system.settings().config().getBytes("pekko.remote.artery.advanced.maximum-frame-size") * 3 / 4;
    Directory after = d;
    for (Master.Event e : events) {
      after = DirectoryEvents.apply(after, e);
    }
    org.apache.pekko.serialization.Serialization serialization = org.apache.pekko.serialization.SerializationExtension
        .get(org.apache.pekko.actor.typed.javadsl.Adapter.toClassic(system));
    int bytes = serialization.serialize(after).get().length;
    if (bytes <= limit) {
      return null;
    }
    return Refusal.of(ErrorCode.RESOURCE_EXHAUSTED, "initial_splits: a table of " + newTablets + " tablets would make"
        + " the directory " + bytes / 1024 + " KiB, over the " + limit / 1024 + " KiB a cluster of "
        + clusterSize + " nodes can publish to its nodes (about " + Math.max(0,
        limit * (d.tabletCount() + (long) newTablets) / bytes - d.tabletCount()) + " more tablets fit); a node alone"
        + " has no such limit");
  }
}
