package io.tabula.cluster;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.List;
import java.util.TreeSet;
import org.apache.pekko.actor.AbstractActor;
import org.apache.pekko.actor.ActorIdentity;
import org.apache.pekko.actor.ActorRef;
import org.apache.pekko.actor.ActorSystem;
import org.apache.pekko.actor.Cancellable;
import org.apache.pekko.actor.Identify;
import org.apache.pekko.actor.Props;
import org.apache.pekko.actor.RootActorPath;
import org.apache.pekko.actor.Terminated;
import org.apache.pekko.cluster.Cluster;
import org.apache.pekko.cluster.ClusterEvent;
import org.apache.pekko.cluster.Member;
import org.apache.pekko.cluster.MemberStatus;
import org.apache.pekko.cluster.singleton.ClusterSingletonProxySettings;
import org.apache.pekko.event.Logging;
import org.apache.pekko.event.LoggingAdapter;

/**
 * Reaches the master singleton from this node, as Pekko's {@code ClusterSingletonProxy} does
 * (it finds the singleton on the oldest member with the role, watches it, forwards to it, and
 * buffers while it is not known), with one difference: when the singleton it knew stops, it
 * looks for the next one at once. Pekko's proxy looks again only when the oldest member
 * changes. The master is guarded by a lease: a node paused longer than the lease's timeout
 * gives it up and starts its master again, and stays the oldest member, so with Pekko's proxy
 * every message to the master waited in the buffer for good (no table created, no tablet
 * opened, until the process was restarted). Akka.NET fixed the same fault in its proxy the
 * same way (akka.net pull request 7315).
 *
 * <p>Settings are Pekko's ({@code pekko.cluster.singleton-proxy}): the buffer's size (the
 * oldest message is dropped to dead letters when it is full) and how often it asks while it
 * looks. A classic actor: Identify and ActorIdentity are classic messages. Owned by its actor.
 */
final class MasterProxy extends AbstractActor {
  /** The timer's message while it looks: ask the oldest member again. Never leaves this node. */
  private enum Look implements org.apache.pekko.actor.NoSerializationVerificationNeeded { INSTANCE }

  private final LoggingAdapter log = Logging.getLogger(getContext().getSystem(), this);
  private final Cluster cluster = Cluster.get(getContext().getSystem());
  /** The singleton's path under a member's root: the manager's name, then the singleton's. */
  private final List<String> path;
  private final String role;
  private final int bufferSize;
  private final Duration lookEvery;
  /** The members with the role that are up, oldest first. */
  private final TreeSet<Member> byAge = new TreeSet<>(Member.ageOrdering());
  private final ArrayDeque<Object[]> buffer = new ArrayDeque<>();
  private ActorRef master;
  private Cancellable looking;
  /** Names the current look's Identify; random at start, so a restarted proxy takes no answer meant for the one before. */
  private int lookId = java.util.concurrent.ThreadLocalRandom.current().nextInt();

  private MasterProxy(String managerName, String singletonName, ClusterSingletonProxySettings settings) {
    this.path = List.of("system", managerName, singletonName);
    this.role = settings.role().isDefined() ? settings.role().get() : null;
    this.bufferSize = settings.bufferSize();
    this.lookEvery = Duration.ofNanos(settings.singletonIdentificationInterval().toNanos());
  }

  /**
   * The proxy of the singleton {@code singletonName} that the manager {@code managerName}
   * (under {@code /system}) runs on the oldest member with the settings' role.
   */
  static Props props(String managerName, String singletonName, ClusterSingletonProxySettings settings) {
    return Props.create(MasterProxy.class, () -> new MasterProxy(managerName, singletonName, settings));
  }

  /** The settings Pekko's proxy would have on {@code system}, for role {@code role}. */
  static ClusterSingletonProxySettings settings(ActorSystem system, String role) {
    return ClusterSingletonProxySettings.create(system).withRole(role);
  }

  @Override
  public void preStart() {
    cluster.subscribe(getSelf(), ClusterEvent.initialStateAsSnapshot(), ClusterEvent.MemberEvent.class);
  }

  @Override
  public void postStop() {
    cluster.unsubscribe(getSelf());
    stopLooking();
  }

  @Override
  public Receive createReceive() {
    return receiveBuilder()
        .match(ClusterEvent.CurrentClusterState.class, s -> {
          byAge.clear();
          for (Member m : s.getMembers()) {
            if (m.status() == MemberStatus.up() && hasRole(m)) {
              byAge.add(m);
            }
          }
          look();
        })
        .match(ClusterEvent.MemberUp.class, e -> changeMembers(() -> {
          if (hasRole(e.member())) {
            byAge.removeIf(m -> m.uniqueAddress().equals(e.member().uniqueAddress()));
            byAge.add(e.member());
          }
        }))
        .match(ClusterEvent.MemberExited.class, e -> changeMembers(() -> remove(e.member())))
        .match(ClusterEvent.MemberRemoved.class, e -> {
          if (e.member().uniqueAddress().equals(cluster.selfUniqueAddress())) {
            getContext().stop(getSelf());
          } else {
            changeMembers(() -> remove(e.member()));
          }
        })
        .match(ClusterEvent.MemberEvent.class, e -> { })
        .match(ActorIdentity.class, id -> {
          if (Integer.valueOf(lookId).equals(id.correlationId()) && id.getActorRef().isPresent()) {
            master = id.getActorRef().get();
            log.info("Master identified at [{}]", master.path());
            getContext().watch(master);
            stopLooking();
            while (!buffer.isEmpty()) {
              Object[] m = buffer.poll();
              master.tell(m[0], (ActorRef) m[1]);
            }
          }
        })
        .matchEquals(Look.INSTANCE, x -> {
          if (looking != null && !byAge.isEmpty()) {
            getContext().actorSelection(new RootActorPath(byAge.first().address(), "/").descendant(path))
                .tell(new Identify(lookId), getSelf());
          }
        })
        .match(Terminated.class, t -> {
          if (t.actor().equals(master)) {
            // The master stopped. Another may start on a member that stays the oldest (its lease
            // was lost and taken again): look now, not only when the oldest member changes.
            log.info("Master at [{}] stopped; looking for the next one", master.path());
            master = null;
            look();
          }
        })
        .matchAny(m -> {
          if (master != null) {
            master.forward(m, getContext());
          } else {
            keep(m);
          }
        })
        .build();
  }

  /** Whether {@code m} can run the master: it has the role, in this node's data center (as Pekko's proxy asks). */
  private boolean hasRole(Member m) {
    return (role == null || m.hasRole(role)) && m.dataCenter().equals(cluster.selfDataCenter());
  }

  private void remove(Member gone) {
    byAge.removeIf(m -> m.uniqueAddress().equals(gone.uniqueAddress()));
  }

  /** Applies a change of members; a new oldest member means a new place to look. */
  private void changeMembers(Runnable change) {
    Member before = byAge.isEmpty() ? null : byAge.first();
    change.run();
    Member after = byAge.isEmpty() ? null : byAge.first();
    if (before == null ? after != null : !before.equals(after)) {
      look();
    }
  }

  /** Forgets the master known (if any) and asks the oldest member for it until it answers. */
  private void look() {
    if (master != null) {
      getContext().unwatch(master);
      master = null;
    }
    stopLooking();
    lookId++;
    looking = getContext().getSystem().scheduler().scheduleWithFixedDelay(Duration.ZERO, lookEvery, getSelf(), Look.INSTANCE,
        getContext().getDispatcher(), getSelf());
  }

  private void stopLooking() {
    if (looking != null) {
      looking.cancel();
      looking = null;
    }
  }

  private void keep(Object m) {
    if (bufferSize == 0) {
      getContext().getSystem().deadLetters().tell(m, getSender());
      return;
    }
    if (buffer.size() >= bufferSize) {
      Object[] dropped = buffer.poll();
      log.debug("The master is not known and {} messages wait for it: the oldest ({}) is dropped", bufferSize,
          dropped[0].getClass().getName());
      getContext().getSystem().deadLetters().tell(dropped[0], (ActorRef) dropped[1]);
    }
    buffer.add(new Object[] {m, getSender()});
  }
}
