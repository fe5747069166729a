package io.tabula.cluster.conformance;

import static com.google.cloud.bigtable.admin.v2.models.GCRules.GCRULES;

import com.google.cloud.bigtable.admin.v2.models.CreateTableRequest;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Runs each scenario with identical inputs against a reference (Google's bundled emulator)
 * and a target, and compares the rendered results with a line diff in the failure message.
 *
 * <p>The target is chosen by the system property {@value #TARGET_PROPERTY}: {@code tabula}
 * (default) starts a Tabula node; {@code cluster} starts three Tabula nodes and calls one that
 * is not the master's ({@link ConformancePeer#tabulaCluster}); {@code secure-cluster} the same
 * with TLS everywhere (Artery too) and authenticated clients ({@link
 * ConformancePeer#secureTabulaCluster}); {@code emulator} starts a second emulator, which validates
 * the harness and the scenarios themselves (they must agree everywhere except server time).
 * A peer that cannot start fails the test class: nothing here is ever skipped. With {@value #PRINT_PROPERTY}{@code =true}
 * every scenario's reference result is printed.
 *
 * <p>Each scenario gets its own table with a unique name, created on both peers with
 * {@link #FAMILY} and {@link #FAMILY2}. A test class registers one as a static
 * {@code @RegisterExtension} field: it starts both peers before the class and stops them after.
 */
final class ConformanceHarness implements BeforeAllCallback, AfterAllCallback {
  static final String TARGET_PROPERTY = "tabula.conformance.target";
  static final String PRINT_PROPERTY = "tabula.conformance.print";
  /** Keeps up to 10 versions, so scenarios with a handful of versions never hit GC. */
  static final String FAMILY = "cf";
  /**
   * Keeps the newest 5 versions. (Not an age rule: scenarios write tiny explicit timestamps,
   * which an age rule makes collectable, and Tabula hides collectable cells at read time
   * where the emulator keeps them until a compaction that never comes.)
   */
  static final String FAMILY2 = "cf2";

  enum Target {
    TABULA, CLUSTER, SECURE_CLUSTER, EMULATOR;

    /** Whether the target is three Tabula nodes, called through one that is not the master's. */
    boolean isCluster() {
      return this == CLUSTER || this == SECURE_CLUSTER;
    }
  }

  /** One scenario, run once per peer against that peer's copy of the table. */
  @FunctionalInterface
  interface Scenario {
    String run(ConformancePeer peer, String table);
  }

  private static final AtomicInteger TABLES = new AtomicInteger();

  private final boolean print = Boolean.getBoolean(PRINT_PROPERTY);
  private Target target;
  private ConformancePeer reference;
  private ConformancePeer subject;
  /** The unexpected errors of the target's last run, and the table it ran on. */
  private List<com.google.api.gax.rpc.ApiException> subjectSurprises = List.of();
  private String subjectTable;

  @Override
  public void beforeAll(ExtensionContext context) throws Exception {
    target = Target.valueOf(
        System.getProperty(TARGET_PROPERTY, "tabula").trim().replace('-', '_').toUpperCase(Locale.ROOT));
    reference = ConformancePeer.emulator("emulator");
    try {
      subject = switch (target) {
        case EMULATOR -> ConformancePeer.emulator("second emulator");
        case CLUSTER -> ConformancePeer.tabulaCluster("three tabula nodes");
        case SECURE_CLUSTER -> ConformancePeer.secureTabulaCluster("three secured tabula nodes");
        case TABULA -> ConformancePeer.tabula("tabula");
      };
    } finally {
      if (subject == null) {
        reference.close();
        reference = null;
      }
    }
  }

  @Override
  public void afterAll(ExtensionContext context) throws Exception {
    if (reference == null) {
      return;
    }
    try {
      if (target.isCluster()) {
        // The scenarios must have crossed nodes: tablets of their tables live on n1 and n3 too.
        java.util.Map<String, Integer> owners = subject.tabletsByOwner();
        System.out.println("tablets by owner after " + context.getDisplayName() + ": " + owners);
        int elsewhere = owners.entrySet().stream().filter(e -> !e.getKey().equals("n2"))
            .mapToInt(java.util.Map.Entry::getValue).sum();
        Assertions.assertTrue(elsewhere > 0, "no scenario table was served by a node other than the one called: "
            + owners);
      }
    } finally {
      // Stopped also when the check fails, so the nodes do not outlive the class in the test JVM.
      try (ConformancePeer r = reference) {
        subject.close();
      } finally {
        reference = null;
        subject = null;
      }
    }
  }

  Target target() {
    return target;
  }

  /** Creates a fresh table with the standard families on both peers, runs, and compares. */
  void same(String scenario, Scenario body) {
    String table = tableName(scenario);
    createStandardTable(table);
    compare(scenario, run(reference, table, body), run(subject, table, body), null);
  }

  /** Runs without creating a table (admin scenarios create their own); compares. */
  void sameWithoutTable(String scenario, Scenario body) {
    String table = tableName(scenario);
    compare(scenario, run(reference, table, body), run(subject, table, body), null);
  }

  /**
   * A deliberate difference: the emulator must still answer {@code emulatorAnswer} (so the
   * quirk stays recorded truthfully), and the target must answer {@code tabulaAnswer} when it
   * is Tabula, or the emulator's answer when it is a second emulator.
   */
  void differs(String scenario, String emulatorAnswer, String tabulaAnswer, Scenario body) {
    String table = tableName(scenario);
    createStandardTable(table);
    String ref = run(reference, table, body);
    Assertions.assertEquals(emulatorAnswer, ref,
        scenario + ": the emulator no longer answers as recorded in docs/api-coverage.md\n"
            + diff(emulatorAnswer, ref));
    String expected = target != Target.EMULATOR ? tabulaAnswer : emulatorAnswer;
    compare(scenario, expected, run(subject, table, body), "intended");
  }

  /**
   * The emulator's answer is not deterministic (two emulators disagree run to run), so only
   * Tabula's intended answer is asserted; against a second emulator the scenario just runs
   * on both peers and must not fail with a client-side exception.
   */
  void tabulaOnly(String scenario, String tabulaAnswer, Scenario body) {
    String table = tableName(scenario);
    createStandardTable(table);
    String ref = run(reference, table, body);
    if (print) {
      System.out.println("--- " + scenario + " (" + reference.name() + ", not compared)\n" + ref);
    }
    String actual = run(subject, table, body);
    if (target != Target.EMULATOR) {
      compare(scenario, tabulaAnswer, actual, "intended");
    }
  }

  /**
   * What the emulator does not serve at all, and exits on (backups: docs/api-coverage.md): run
   * on the target alone, which must answer {@code tabulaAnswer}; skipped when the target is a
   * second emulator.
   */
  void tabulaAlone(String scenario, String tabulaAnswer, Scenario body) {
    if (target == Target.EMULATOR) {
      return;
    }
    String table = tableName(scenario);
    createStandardTable(table, List.of(subject));
    compare(scenario, tabulaAnswer, run(subject, table, body), "intended");
  }

  private String run(ConformancePeer peer, String table, Scenario body) {
    Render.takeSurprises();
    String outcome = Render.outcome(() -> body.run(peer, table));
    if (peer == subject) {
      subjectSurprises = Render.takeSurprises();
      subjectTable = table;
    }
    return outcome;
  }

  /**
   * What a person debugging a failed comparison needs beyond the rendered answers: the
   * target's unexpected errors (which call, its status message, where), and for a cluster
   * where the scenario's table is served, as the called node sees it.
   */
  private String whatTheTargetSaw() {
    StringBuilder out = new StringBuilder();
    for (com.google.api.gax.rpc.ApiException e : subjectSurprises) {
      out.append("\n").append(subject.name()).append(" failed a call at ").append(java.time.Instant.now())
          .append(": ").append(Render.describe(e));
    }
    if (target.isCluster() && subjectTable != null) {
      try {
        out.append("\nits tablets now: ").append(subject.tabletsOf(subjectTable));
        out.append("\nthe nodes' log lines naming the table:").append(logLinesNaming(subjectTable));
      } catch (java.io.IOException | RuntimeException e) {
        out.append("\nits tablets could not be listed: ").append(e);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
    return out.toString();
  }

  /**
   * The last {@value #LOG_LINES} lines this JVM logged (its nodes' and the test's) that name
   * {@code text}, from logback-test.xml's in-memory RECENT appender; empty if there is none.
   */
  private static String logLinesNaming(String text) {
    if (!(org.slf4j.LoggerFactory.getILoggerFactory() instanceof ch.qos.logback.classic.LoggerContext context)
        || !(context.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME).getAppender("RECENT")
            instanceof ch.qos.logback.core.read.CyclicBufferAppender<ch.qos.logback.classic.spi.ILoggingEvent> recent)) {
      return " (no in-memory log)";
    }
    java.util.ArrayDeque<String> lines = new java.util.ArrayDeque<>();
    for (int i = 0; i < recent.getLength(); i++) {
      ch.qos.logback.classic.spi.ILoggingEvent e = recent.get(i);
      String message = e.getFormattedMessage();
      if (message != null && message.contains(text)) {
        lines.addLast(java.time.Instant.ofEpochMilli(e.getTimeStamp()) + " " + e.getLevel() + " "
            + e.getLoggerName() + " - " + message);
        if (lines.size() > LOG_LINES) {
          lines.removeFirst();
        }
      }
    }
    return lines.isEmpty() ? " none" : "\n" + String.join("\n", lines);
  }

  private static final int LOG_LINES = 40;

  private void compare(String scenario, String expected, String actual, String expectedLabel) {
    if (print) {
      System.out.println("--- " + scenario + " (" + reference.name() + ")\n" + expected);
    }
    if (!expected.equals(actual)) {
      String left = expectedLabel == null ? reference.name() : expectedLabel;
      Assertions.fail(scenario + ": " + subject.name() + " differs from " + left
          + " (- " + left + ", + " + subject.name() + ")\n" + diff(expected, actual) + whatTheTargetSaw());
    }
  }

  private void createStandardTable(String table) {
    createStandardTable(table, List.of(reference, subject));
  }

  private static void createStandardTable(String table, List<ConformancePeer> peers) {
    for (ConformancePeer peer : peers) {
      peer.admin().createTable(CreateTableRequest.of(table)
          .addFamily(FAMILY, GCRULES.maxVersions(10))
          .addFamily(FAMILY2, GCRULES.maxVersions(5)));
    }
  }

  /** A table id unique in this JVM, readable after the scenario name. */
  static String tableName(String scenario) {
    String base = scenario.replaceAll("[^A-Za-z0-9_.-]", "-");
    if (base.length() > 40) {
      base = base.substring(0, 40);
    }
    return base + "-" + TABLES.incrementAndGet();
  }

  /** A line diff (longest common subsequence): "  " both, "- " expected only, "+ " actual only. */
  static String diff(String expected, String actual) {
    String[] a = expected.split("\n", -1);
    String[] b = actual.split("\n", -1);
    int[][] lcs = new int[a.length + 1][b.length + 1];
    for (int i = a.length - 1; i >= 0; i--) {
      for (int j = b.length - 1; j >= 0; j--) {
        lcs[i][j] = a[i].equals(b[j]) ? lcs[i + 1][j + 1] + 1 : Math.max(lcs[i + 1][j], lcs[i][j + 1]);
      }
    }
    List<String> out = new ArrayList<>();
    int i = 0;
    int j = 0;
    while (i < a.length || j < b.length) {
      if (i < a.length && j < b.length && a[i].equals(b[j])) {
        out.add("  " + a[i++]);
        j++;
      } else if (j < b.length && (i == a.length || lcs[i][j + 1] >= lcs[i + 1][j])) {
        out.add("+ " + b[j++]);
      } else {
        out.add("- " + a[i++]);
      }
    }
    return String.join("\n", out);
  }

}
