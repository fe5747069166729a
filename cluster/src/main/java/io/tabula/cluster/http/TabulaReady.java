package io.tabula.cluster.http;

import java.util.concurrent.CompletionStage;
import java.util.function.Supplier;
import org.apache.pekko.actor.ActorSystem;

/**
 * The node's readiness check for Pekko Management's {@code /ready} (registered in
 * {@code pekko.management.health-checks.readiness-checks}): ready once the node has started
 * (it is Up and holds the master's directory) and every tablet the master gave it is open.
 */
public final class TabulaReady implements Supplier<CompletionStage<Boolean>> {
  private final ActorSystem system;

  /** Created by Pekko Management with the node's actor system. */
  public TabulaReady(ActorSystem system) {
    this.system = system;
  }

  @Override
  public CompletionStage<Boolean> get() {
    return TabulaRoutes.readyStage(system);
  }
}
