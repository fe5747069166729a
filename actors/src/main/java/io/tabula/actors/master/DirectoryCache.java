package io.tabula.actors.master;

import io.tabula.actors.Stages;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.javadsl.AskPattern;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.actor.typed.pubsub.Topic;

/**
 * A node's copy of the master's {@link Directory}: the newest version it has seen, from the
 * directory topic or from asking the master. Any thread may read it; listeners hear of each
 * newer version in order. Thread-safe.
 */
public final class DirectoryCache {
  private final AtomicReference<Directory> current = new AtomicReference<>(Directory.EMPTY);
  private final List<Consumer<Directory>> listeners = new CopyOnWriteArrayList<>();
  private final AtomicReference<CompletableFuture<Directory>> refreshing = new AtomicReference<>();

  public Directory get() {
    return current.get();
  }

  /** Takes {@code d} if it is newer than the copy held, and tells the listeners. */
  public synchronized void offer(Directory d) {
    if (d.version() > current.get().version()) {
      current.set(d);
      listeners.forEach(l -> l.accept(d));
    }
  }

  public void addListener(Consumer<Directory> listener) {
    listeners.add(listener);
  }

  /**
   * Asks the master for its directory and keeps it if newer; completes with the copy held
   * afterwards. Callers that ask while an ask is under way share it: when a tablet splits,
   * every request that meets it refreshes, and one ask each kept the master's mailbox full
   * of directory requests while the split waited there to be recorded.
   */
  public CompletionStage<Directory> refresh(ActorRef<Master.Command> master, ActorSystem<?> system,
      Duration timeout) {
    CompletableFuture<Directory> mine = new CompletableFuture<>();
    CompletableFuture<Directory> under = refreshing.compareAndExchange(null, mine);
    if (under != null) {
      return under;
    }
    Stages.direct(AskPattern.<Master.Command, Directory>ask(master, Master.GetDirectory::new, timeout,
        system.scheduler())).whenComplete((d, err) -> {
          refreshing.set(null);
          if (err != null) {
            mine.completeExceptionally(err);
          } else {
            offer(d);
            mine.complete(get());
          }
        });
    return mine;
  }

  /** An actor that subscribes to the directory topic and feeds every copy published into {@code cache}. */
  public static Behavior<Directory> subscriber(DirectoryCache cache, ActorRef<Topic.Command<Directory>> topic) {
    return Behaviors.setup(ctx -> {
      topic.tell(Topic.subscribe(ctx.getSelf()));
      return Behaviors.receiveMessage(d -> {
        cache.offer(d);
        return Behaviors.same();
      });
    });
  }
}
