package io.tabula.actors.master;

import java.util.concurrent.atomic.AtomicReference;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.Extension;
import org.apache.pekko.actor.typed.ExtensionId;

/**
 * The directory the master running in this actor system last published, if it runs here: how
 * the node's copy on the master's node holds the master's own whole directory rather than its
 * share ({@link DirectoryCache}), without relying on the published change keeping it on its way
 * (a local message may be serialized and read back: Pekko's check of local messages' bytes,
 * which the tests turn on). Set by the master as it publishes; cleared as it stops. Thread-safe.
 */
public final class PublishedHere implements Extension {
  private static final ExtensionId<PublishedHere> ID = new ExtensionId<>() {
    @Override
    public PublishedHere createExtension(ActorSystem<?> system) {
      return new PublishedHere();
    }
  };

  private final AtomicReference<Directory> last = new AtomicReference<>();

  private PublishedHere() {}

  /** The one of {@code system}. */
  public static PublishedHere of(ActorSystem<?> system) {
    return system.registerExtension(ID);
  }

  /** The directory the master here last published, or null: no master runs here. */
  public Directory last() {
    return last.get();
  }

  void published(Directory d) {
    last.set(d);
  }

  /** The master here stopped: it publishes no more. */
  void stopped() {
    last.set(null);
  }
}
