package io.tabula.actors;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import com.typesafe.config.ConfigValueFactory;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.persistence.jdbc.testkit.javadsl.SchemaUtils;

/**
 * The configuration actor tests run with: every message sent to an actor goes through its
 * serializer ({@code serialize-messages = on}, so a missing Kryo registration fails the
 * test), and the master's journal and snapshots (the plugins it names by default) live in
 * files under a test's temporary directory, the way a node keeps them under its storage root
 * (MasterJournals), so a new actor system on the same directory recovers what an earlier one
 * wrote. {@link #withJdbcJournalIn}
 * is the journal nodes kept before (pekko-persistence-jdbc on an H2 file), for the migration.
 *
 * <p>Pekko exempts its own classes from {@code serialize-messages}, {@code StatusReply}
 * among them; tests pass each reply through {@link #roundTrip} to check its value travels.
 */
public final class ActorTestConfig {
  private ActorTestConfig() {}

  private static final String BASE = """
      pekko {
        loggers = ["org.apache.pekko.event.slf4j.Slf4jLogger"]
        logging-filter = "org.apache.pekko.event.slf4j.Slf4jLoggingFilter"
        loglevel = INFO
        actor.serialize-messages = on
      }
      """;

  private static final String JDBC = """
      tabula.master {
        journal-plugin = "jdbc-journal"
        snapshot-plugin = "jdbc-snapshot-store"
      }
      jdbc-journal.use-shared-db = "tabula"
      jdbc-snapshot-store.use-shared-db = "tabula"
      jdbc-read-journal.use-shared-db = "tabula"
      pekko-persistence-jdbc.shared-databases.tabula {
        profile = "slick.jdbc.H2Profile$"
        db {
          user = "tabula"
          password = ""
          driver = "org.h2.Driver"
          numThreads = 2
          maxConnections = 2
          minConnections = 1
        }
      }
      """;

  /** The JDBC url of the journal kept under {@code dir}. */
  public static String journalUrl(Path dir) {
    return "jdbc:h2:file:" + dir.resolve("journal").toAbsolutePath() + ";FILE_LOCK=FS";
  }

  /** Test configuration with the journal in {@code dir}. */
  public static Config withJournalIn(Path dir) {
    return ConfigFactory.parseString(BASE)
        .withValue("tabula.master-journal.root", ConfigValueFactory.fromAnyRef(dir.toAbsolutePath().toString()))
        .withFallback(ConfigFactory.load());
  }

  /** A test kit whose journal lives in {@code dir}. */
  public static ActorTestKit startWithJournalIn(Path dir) {
    return ActorTestKit.create(withJournalIn(dir));
  }

  /** Test configuration with the journal nodes used to keep: pekko-persistence-jdbc on an H2 file in {@code dir}. */
  public static Config withJdbcJournalIn(Path dir) {
    return ConfigFactory.parseString(JDBC).withFallback(ConfigFactory.parseString(BASE))
        .withValue("pekko-persistence-jdbc.shared-databases.tabula.db.url",
            ConfigValueFactory.fromAnyRef(journalUrl(dir)))
        .withFallback(ConfigFactory.load());
  }

  /** A test kit on {@link #withJdbcJournalIn}, with the journal tables created. */
  public static ActorTestKit startWithJdbcJournalIn(Path dir) {
    ActorTestKit kit = ActorTestKit.create(withJdbcJournalIn(dir));
    await(SchemaUtils.createIfNotExists(kit.system()), Duration.ofSeconds(20));
    return kit;
  }

  /** Serializes and deserializes {@code message} as a remote send would, and returns the copy that arrived. */
  public static <T> T roundTrip(ActorTestKit kit, T message) {
    return kit.serializationTestKit().verifySerialization(message, false);
  }

  /**
   * Deletes {@code dir} and what it holds, walking it again while a file appears meanwhile (a
   * journal's writer may still add one as the actor system stops: JUnit's own deletion of a
   * temporary folder failed on that in clean-clone CI runs).
   */
  public static void deleteTree(Path dir) throws InterruptedException {
    for (int attempt = 0; attempt < 20 && java.nio.file.Files.exists(dir); attempt++) {
      try (java.util.stream.Stream<Path> all = java.nio.file.Files.walk(dir)) {
        for (Path p : all.sorted(java.util.Comparator.reverseOrder()).toList()) {
          java.nio.file.Files.deleteIfExists(p);
        }
      } catch (java.io.IOException | java.io.UncheckedIOException stillWritten) {
        Thread.sleep(100); // a file added meanwhile: walk again
      }
    }
  }

  /** The value of {@code stage}, failing the test after {@code timeout}. */
  public static <T> T await(CompletionStage<T> stage, Duration timeout) {
    try {
      return stage.toCompletableFuture().get(timeout.toMillis(), TimeUnit.MILLISECONDS);
    } catch (java.util.concurrent.ExecutionException e) {
      throw new AssertionError("failed: " + e.getCause(), e.getCause());
    } catch (java.util.concurrent.TimeoutException e) {
      throw new AssertionError("timed out after " + timeout, e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError("interrupted", e);
    }
  }
}
