package io.tabula.actors.master;

import java.util.concurrent.atomic.LongAdder;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.Extension;
import org.apache.pekko.actor.typed.ExtensionId;

/**
 * The operations the master recorded while it ran on this node (splits, moves, merges,
 * recoveries), counted for the node's metrics: one set per actor system, so a node that runs
 * the master a second time keeps counting on. Thread-safe.
 */
public final class MasterCounts implements Extension {
  public final LongAdder splits = new LongAdder();
  public final LongAdder merges = new LongAdder();
  public final LongAdder moves = new LongAdder();
  public final LongAdder recoveries = new LongAdder();

  private static final ExtensionId<MasterCounts> ID = new ExtensionId<>() {
    @Override
    public MasterCounts createExtension(ActorSystem<?> system) {
      return new MasterCounts();
    }
  };

  private MasterCounts() {}

  /** The counts of {@code system}. */
  public static MasterCounts of(ActorSystem<?> system) {
    return ID.apply(system);
  }
}
