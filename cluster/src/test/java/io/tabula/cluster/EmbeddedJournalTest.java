package io.tabula.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.tabula.persistence.schema.GcPolicy;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.apache.pekko.actor.NoSerializationVerificationNeeded;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.Props;
import org.apache.pekko.actor.typed.Terminated;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.persistence.typed.PersistenceId;
import org.apache.pekko.persistence.typed.javadsl.CommandHandler;
import org.apache.pekko.persistence.typed.javadsl.EventHandler;
import org.apache.pekko.persistence.typed.javadsl.EventSourcedBehavior;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * An application's own persistent actor, in the actor system that hosts an embedded node,
 * never goes through the master's journal (docs/embedding.md; hole S10 of the fencing
 * review): the master names its journal and snapshot store itself ({@code
 * tabula.master.journal-plugin}, {@code snapshot-plugin}), and a node leaves the actor
 * system's default journal to the application. Were Tabula's journal the default, the
 * application actor's recovery would open the master's journal as a new epoch and fence the
 * running master (or fail with NotMasterException on a node without the lease).
 *
 * <p>Each test starts one embedded node in the test JVM (ports 0, data in a fresh folder),
 * runs an application persistent actor beside it, and checks that the master's journal is
 * still at the epoch the master opened, unfenced, and that the master still records a
 * change (a new table).
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class EmbeddedJournalTest {
  private static final Duration WAIT = Duration.ofSeconds(20);

  @TempDir
  Path dir;

  @Test
  void anApplicationActorWithNoJournalOfItsOwnStopsAndTheMasterKeepsItsEpoch() throws IOException {
    ActorSystem<Void> system = ActorSystem.create(Behaviors.empty(), "tabula",
        TabulaNode.embeddedConfig(application(Map.of())));
    try (TabulaNode node = embed(system)) {
      String epoch = newestEpoch();
      TestProbe<Object> outcome = TestProbe.create(system);
      system.systemActorOf(watching(Counter.create("app-counter"), outcome.getRef()), "app", Props.empty())
          .tell(new Add(1, outcome.getRef().narrow()));
      Object first = outcome.receiveMessage(WAIT);

      assertEquals(epoch, newestEpoch(), "the application's actor opened the master's journal as a new epoch");
      assertFalse(Files.exists(dir.resolve("master/journal").resolve(epoch).resolve("FENCED")),
          "the master's epoch was fenced");
      assertEquals(STOPPED, first, "with no default journal configured the application's actor stops");
      masterRecordsATable(node);
      assertEquals(epoch, newestEpoch(), "the master's journal moved to a new epoch");
    }
  }

  @Test
  void anApplicationActorOnItsOwnDefaultJournalRecoversFromItAndTheMasterKeepsItsEpoch() throws IOException {
    ActorSystem<Void> system = ActorSystem.create(Behaviors.empty(), "tabula",
        TabulaNode.embeddedConfig(application(Map.of(
            "pekko.persistence.journal.plugin", "pekko.persistence.journal.inmem",
            "pekko.persistence.snapshot-store.plugin", "pekko.persistence.snapshot-store.local",
            "pekko.persistence.snapshot-store.local.dir", dir.resolve("app-snapshots").toString()))));
    try (TabulaNode node = embed(system)) {
      String epoch = newestEpoch();
      TestProbe<Object> outcome = TestProbe.create(system);
      ActorRef<Add> first = system.systemActorOf(watching(Counter.create("app-counter"), outcome.getRef()),
          "app-1", Props.empty());
      first.tell(new Add(1, outcome.getRef().narrow()));
      first.tell(new Add(2, outcome.getRef().narrow()));
      assertEquals(List.of(1, 3), outcome.receiveSeveralMessages(2, WAIT));
      first.tell(new Add(Counter.STOP, outcome.getRef().narrow()));
      assertEquals(STOPPED, outcome.receiveMessage(WAIT));
      ActorRef<Add> again = system.systemActorOf(watching(Counter.create("app-counter"), outcome.getRef()),
          "app-2", Props.empty());
      again.tell(new Add(0, outcome.getRef().narrow()));
      assertEquals(3, outcome.receiveMessage(WAIT), "recovered from the application's own journal");

      assertEquals(epoch, newestEpoch(), "the application's actor opened the master's journal as a new epoch");
      masterRecordsATable(node);
      assertEquals(epoch, newestEpoch(), "the master's journal moved to a new epoch");
    }
  }

  /**
   * The actor system's default journal naming one of the master's (as a node's own settings
   * did before the master named its journal, and as an operator's file may still) is refused
   * before the node starts, rather than left to fence the master at the first persistent
   * actor's recovery.
   */
  @Test
  void aDefaultJournalThatIsTheMastersIsRefused() {
    for (String plugin : List.of("tabula.master-journal", "jdbc-journal")) {
      ActorSystem<Void> system = ActorSystem.create(Behaviors.empty(), "tabula",
          TabulaNode.embeddedConfig(application(Map.of("pekko.persistence.journal.plugin", plugin))));
      try {
        StartRefusedException e = assertThrows(StartRefusedException.class, () -> TabulaNode.embed(system));
        assertEquals(StartRefusedException.Reason.MASTER_JOURNAL, e.reason(), e::getMessage);
      } finally {
        system.terminate();
      }
    }
  }

  /** The master's journal and snapshot store come as one of Tabula's two pairs, or the start is refused. */
  @Test
  void theMastersJournalAndSnapshotStoreMustBeOneOfTabulasPairs() {
    Config defaults = TabulaNode.configuration(ConfigFactory.empty());
    MasterJournalSetup.checkPlugins(defaults);
    MasterJournalSetup.checkPlugins(ConfigFactory.parseMap(Map.of("tabula.master.journal-plugin", "jdbc-journal",
        "tabula.master.snapshot-plugin", "jdbc-snapshot-store")).withFallback(defaults));
    for (Map<String, Object> wrong : List.<Map<String, Object>>of(
        Map.of("tabula.master.journal-plugin", "jdbc-journal"),
        Map.of("tabula.master.journal-plugin", "pekko.persistence.journal.inmem",
            "tabula.master.snapshot-plugin", "pekko.persistence.snapshot-store.local"))) {
      StartRefusedException e = assertThrows(StartRefusedException.class,
          () -> MasterJournalSetup.checkPlugins(ConfigFactory.parseMap(wrong).withFallback(defaults)));
      assertEquals(StartRefusedException.Reason.MASTER_JOURNAL, e.reason(), e::getMessage);
    }
  }

  /** Embeds a node in {@code system}, terminating the system if that fails. */
  private static TabulaNode embed(ActorSystem<?> system) {
    try {
      return TabulaNode.embed(system);
    } catch (RuntimeException e) {
      system.terminate();
      throw e;
    }
  }

  private Config application(Map<String, Object> more) {
    Map<String, Object> c = new HashMap<>(more);
    c.put("tabula.node.data-dir", dir.toString());
    c.put("tabula.node.http-port", 0);
    c.put("tabula.node.serve-grpc", false);
    return ConfigFactory.parseMap(c);
  }

  /** The master still records changes in its journal: it answers a new table once it persisted it. */
  private static void masterRecordsATable(TabulaNode node) {
    assertEquals("after", node.tablets().createTable("after", Map.of("f", GcPolicy.maxVersions(1)), List.of())
        .toCompletableFuture().orTimeout(WAIT.toSeconds(), TimeUnit.SECONDS).join().name());
  }

  /** The newest epoch folder of the master's journal on the storage root. */
  private String newestEpoch() throws IOException {
    try (Stream<Path> epochs = Files.list(dir.resolve("master/journal"))) {
      return epochs.map(p -> p.getFileName().toString()).filter(n -> n.matches("\\d{10}")).sorted()
          .reduce((a, b) -> b).orElseThrow(() -> new AssertionError("the master opened no epoch"));
    }
  }

  private static final String STOPPED = "stopped";

  /** {@code actor}, and {@value #STOPPED} told to {@code outcome} once it stops. */
  private static Behavior<Add> watching(Behavior<Add> actor, ActorRef<Object> outcome) {
    return Behaviors.setup(ctx -> {
      ActorRef<Add> child = ctx.spawn(actor, "actor");
      ctx.watch(child);
      return Behaviors.receive(Add.class)
          .onMessage(Add.class, add -> {
            child.tell(add);
            return Behaviors.same();
          })
          .onSignal(Terminated.class, t -> {
            outcome.tell(STOPPED);
            return Behaviors.stopped();
          })
          .build();
    });
  }

  /** Adds {@code n} to the counter and answers its new value; {@link Counter#STOP} stops it. */
  record Add(int n, ActorRef<Integer> replyTo) implements NoSerializationVerificationNeeded {}

  /** An application's persistent actor with no journal plugin of its own: the actor system's defaults. */
  private static final class Counter extends EventSourcedBehavior<Add, Integer, Integer> {
    static final int STOP = Integer.MIN_VALUE;

    private Counter(String id) {
      super(PersistenceId.ofUniqueId(id));
    }

    static Behavior<Add> create(String id) {
      return new Counter(id);
    }

    @Override
    public Integer emptyState() {
      return 0;
    }

    @Override
    public CommandHandler<Add, Integer, Integer> commandHandler() {
      return newCommandHandlerBuilder().forAnyState()
          .onCommand(a -> a.n() == STOP, a -> Effect().stop())
          .onCommand(Add.class, (state, a) -> Effect().persist(a.n()).thenReply(a.replyTo(), s -> s))
          .build();
    }

    @Override
    public EventHandler<Integer, Integer> eventHandler() {
      return newEventHandlerBuilder().forAnyState().onEvent(Integer.class, Integer::sum).build();
    }
  }
}
