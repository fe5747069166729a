package io.tabula.cluster.sharding;

import io.tabula.actors.tablet.TabletActor;
import io.tabula.protocol.errors.ErrorCode;
import io.tabula.protocol.errors.Refusal;
import org.apache.pekko.actor.DeadLetter;
import org.apache.pekko.actor.Dropped;
import org.apache.pekko.actor.UnhandledMessage;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.eventstream.EventStream;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.cluster.sharding.typed.ShardingEnvelope;

/**
 * Answers the tablet requests that Cluster Sharding loses during a hand-over, so that their
 * senders retry at once instead of waiting out their timeout. A shard that is handing its
 * tablet over handles nothing but the end of its entity, so a request its region forwarded
 * to it just before (a region elsewhere still routed there) is unhandled, and one that
 * reaches an entity already stopped is a dead letter. Each such request never reached the
 * tablet, so it is answered as moved: the sender looks the tablet up again and its next
 * attempt waits in the regions for the new owner. Subscribes to this node's event stream.
 */
public final class LostRequests {
  private LostRequests() {}

  public static Behavior<Object> create() {
    return Behaviors.setup(ctx -> {
      ctx.getSystem().eventStream().tell(new EventStream.Subscribe<>(UnhandledMessage.class, ctx.getSelf().narrow()));
      ctx.getSystem().eventStream().tell(new EventStream.Subscribe<>(DeadLetter.class, ctx.getSelf().narrow()));
      ctx.getSystem().eventStream().tell(new EventStream.Subscribe<>(Dropped.class, ctx.getSelf().narrow()));
      return Behaviors.receiveMessage(event -> {
        Object lost = unwrap(event);
        if (lost instanceof TabletActor.Request r) {
          r.replyTo().<Object>unsafeUpcast().tell(Refusal.of(ErrorCode.MOVED, "the tablet was being handed to "
              + "another node; look the row up again").reply());
        }
        return Behaviors.same();
      });
    });
  }

  /**
   * The message inside the wrappers it was lost in: a region drops its buffer for a shard
   * as a {@link Dropped} sent to dead letters, which publishes it inside a {@link DeadLetter}.
   */
  private static Object unwrap(Object event) {
    Object m = event;
    for (int depth = 0; depth < 4; depth++) {
      if (m instanceof UnhandledMessage u) {
        m = u.getMessage();
      } else if (m instanceof DeadLetter d) {
        m = d.message();
      } else if (m instanceof Dropped d) {
        m = d.message();
      } else if (m instanceof ShardingEnvelope<?> e) {
        m = e.message();
      } else {
        return m;
      }
    }
    return m;
  }
}
