package io.tabula.multijvm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.tabula.cluster.security.TestPki;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.pekko.actor.ActorIdentity;
import org.apache.pekko.actor.ActorRef;
import org.apache.pekko.actor.ActorSystem;
import org.apache.pekko.actor.Identify;
import org.apache.pekko.pattern.Patterns;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A process without the cluster's certificate can neither join the cluster nor send a node a
 * message (Artery over mutual TLS, {@code --cluster-ca}). Two node JVMs with TLS, each with its
 * own certificate of the cluster's CA naming the DNS name {@value #CLUSTER_NAME}, form a
 * cluster. Then, for {@value #INTRUDERS_FOR_SECONDS} s:
 *
 * <ul>
 *   <li>a node JVM with a certificate of another CA (which itself trusts the cluster's CA, so
 *       it is the members that refuse it), and one without TLS at all, both given n1 as their
 *       seed, try to join: neither becomes a member (n1's and n2's {@code /cluster/members}, and
 *       n2's {@code /tabula/nodes}, over HTTPS with a viewer's token, name n1 and n2 only); the
 *       intruder's log has n1's refusal of its handshake (a fatal {@code certificate_unknown}
 *       alert), the plain node's its join attempts failing. (n1 logs neither refusal: Pekko
 *       1.2.1 drops a failed inbound handshake without a word.)
 *   <li>an actor system in this JVM asks n1 to identify its cluster daemon ({@code Identify} to
 *       {@code pekko://tabula@127.0.0.1:PORT/system/cluster/core/daemon}): over Artery without
 *       TLS, and over TLS with the other CA's certificate, it gets no answer; over TLS with a
 *       certificate of the cluster's CA it does, so the silence is the refusal and not a wrong
 *       address.
 * </ul>
 *
 * <p>Afterwards the cluster is what it was: n1 and n2, both ready.
 */
@Timeout(value = 4, unit = TimeUnit.MINUTES)
@ExtendWith(ClusterFixture.LogsOnFailure.class)
class ClusterCertificateTest {
  static final String CLUSTER_NAME = "tabula-cluster";
  static final int INTRUDERS_FOR_SECONDS = 20;
  private static final String VIEWER_TOKEN = "viewer-token-0123456789";
  private static final Duration NO_ANSWER_WITHIN = Duration.ofSeconds(5);
  private static final Pattern MEMBER = Pattern.compile("\"node\":\"(pekko://[^\"]+)\"");
  /** What a handshake the node refused leaves in the log of the process that tried, in the JDK's words. */
  private static final Pattern TLS_FAILURE = Pattern.compile("SSLHandshakeException|certificate_unknown");
  /** What a node that cannot join logs (Pekko's words). */
  private static final Pattern NOT_JOINED = Pattern.compile("Couldn't join seed nodes");

  @Test
  void aProcessWithoutTheClustersCertificateNeitherJoinsNorIsAnswered() throws Exception {
    try (ClusterFixture cluster = new ClusterFixture()) {
      Path pki = Files.createDirectories(cluster.root.resolve("pki"));
      TestPki ca = TestPki.ca("tabula cluster CA");
      Path caFile = ca.writeCertificate(pki.resolve("ca.crt"));
      TestPki other = TestPki.ca("another CA");
      // Same DNS name as the members: only the CA differs.
      TestPki.KeyFiles foreign = other.issue("CN=intruder,O=tabula", CLUSTER_NAME).write(pki, "intruder");
      Path auth = Files.writeString(pki.resolve("auth.conf"), "tabula.security {\n"
          + "  tokens = [ { principal = \"user:viewer@example.com\", token = \"" + VIEWER_TOKEN + "\" } ]\n"
          + "  bindings = [ { role = roles/bigtable.viewer, members = [\"user:viewer@example.com\"] } ]\n"
          + "}\n");
      Map<String, List<String>> flags = new HashMap<>();
      for (String n : List.of("n1", "n2")) {
        TestPki.KeyFiles own = ca.issue("CN=" + n + ",O=tabula", CLUSTER_NAME).write(pki, n);
        flags.put(n, tls(own, caFile, auth));
      }
      flags.put("intruder", tls(foreign, caFile, auth));
      cluster.flags = name -> flags.getOrDefault(name, List.of()); // "plain": no TLS at all
      NodeJvm n1 = cluster.add("n1");
      NodeJvm n2 = cluster.add("n2");
      Set<String> members = Set.of(address(n1), address(n2));
      assertEquals(members, members(n1), "n1 and n2 form the cluster");

      long intrudersStarted = System.nanoTime();
      NodeJvm intruder = cluster.start("intruder", cluster.data);
      NodeJvm plain = cluster.start("plain", cluster.data);
      System.out.printf("n1 %s and n2 %s are the cluster; %s (another CA's certificate) and %s (no TLS) try to "
          + "join n1 for %d s%n", address(n1), address(n2), address(intruder), address(plain), INTRUDERS_FOR_SECONDS);

      Optional<ActorRef> withoutTls = identify(n1, probe("plain", Map.of()));
      Optional<ActorRef> withForeign = identify(n1, probe("foreign", artery(foreign, caFile)));
      TestPki.KeyFiles member = ca.issue("CN=probe,O=tabula", CLUSTER_NAME).write(pki, "probe");
      Optional<ActorRef> withMembers = identify(n1, probe("member", artery(member, caFile)));
      System.out.printf("Identify of n1's cluster daemon: without TLS %s, with another CA's certificate %s, with a "
          + "certificate of the cluster's CA %s%n", withoutTls, withForeign, withMembers);
      assertEquals(Optional.empty(), withoutTls, "a process without TLS is answered");
      assertEquals(Optional.empty(), withForeign, "a process with another CA's certificate is answered");
      assertTrue(withMembers.isPresent(), "the control: with the cluster's certificate the same Identify is answered, "
          + "so the silences above are refusals");

      long waited = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - intrudersStarted);
      Thread.sleep(Math.max(0, INTRUDERS_FOR_SECONDS * 1000L - waited));
      for (NodeJvm n : List.of(n1, n2)) {
        assertEquals(members, members(n), n.name + "'s /cluster/members after " + INTRUDERS_FOR_SECONDS + " s");
        n.awaitReady(Duration.ofSeconds(10));
      }
      var nodes = n2.get("/tabula/nodes", VIEWER_TOKEN);
      assertEquals(200, nodes.statusCode(), "n2 forwards /tabula/nodes to the master's node n1: " + nodes.body());
      for (String name : List.of("n1", "n2", "intruder", "plain")) {
        assertEquals(name.startsWith("n"), nodes.body().contains("\"name\":\"" + name + "\""), nodes.body());
      }
      // On a loaded machine a node may still be starting: its first failed join is waited for (up to 60 s more).
      long logsBy = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
      while ((linesMatching(intruder, TLS_FAILURE).isEmpty() || linesMatching(plain, NOT_JOINED).isEmpty())
          && System.nanoTime() < logsBy) {
        Thread.sleep(500);
      }
      String intruderTls = linesMatching(intruder, TLS_FAILURE);
      String plainJoins = linesMatching(plain, NOT_JOINED);
      System.out.printf("-- the intruder (%s), its handshakes refused:%n%s%n-- the plain node (%s), its joins:%n%s%n",
          intruder.alive() ? "still trying" : "exited", intruderTls, plain.alive() ? "still trying" : "exited",
          plainJoins);
      assertFalse(intruderTls.isEmpty(), "the intruder's log has n1's refusal of its handshake; its log:\n"
          + intruder.tail(60));
      assertFalse(plainJoins.isEmpty(), "the plain node's log has its joins failing; its log:\n" + plain.tail(60));

      // Members over TLS stop on SIGTERM in bounded time: Pekko's Artery over TLS may keep a connection open
      // until its peer closes it, and the system's termination waits for it; the node exits regardless once its
      // coordinated shutdown has run through (NodeShutdown.awaitStopped).
      for (NodeJvm n : List.of(n2, n1)) {
        long stopping = System.nanoTime();
        assertTrue(n.terminate(Duration.ofSeconds(60)), n.name + " did not exit within 60 s of SIGTERM; its log:\n"
            + n.tail(60));
        System.out.printf("cluster certificate: %s exited %.1f s after SIGTERM%n", n.name,
            (System.nanoTime() - stopping) / 1e9);
      }
    }
  }

  /** {@code tabula server}'s TLS and authentication flags for a node with {@code own} certificate. */
  private static List<String> tls(TestPki.KeyFiles own, Path clusterCa, Path auth) {
    return List.of("--tls-cert", own.cert().toString(), "--tls-key", own.key().toString(),
        "--cluster-ca", clusterCa.toString(), "--auth", auth.toString());
  }

  /** Artery over TLS with Pekko's rotating-keys engine, presenting {@code own} and trusting {@code ca}. */
  private static Map<String, Object> artery(TestPki.KeyFiles own, Path ca) {
    String engine = "pekko.remote.artery.ssl.rotating-keys-engine.";
    return Map.of("pekko.remote.artery.transport", "tls-tcp",
        "pekko.remote.artery.ssl.ssl-engine-provider",
        "org.apache.pekko.remote.artery.tcp.ssl.RotatingKeysSSLEngineProvider",
        engine + "cert-file", own.cert().toString(), engine + "key-file", own.key().toString(),
        engine + "ca-cert-file", ca.toString());
  }

  /** A plain actor system on 127.0.0.1 with Artery over TCP and {@code settings} over it (TLS, say). */
  private static ActorSystem probe(String name, Map<String, Object> settings) {
    Config config = ConfigFactory.parseMap(settings).withFallback(ConfigFactory.parseMap(Map.of(
        "pekko.actor.provider", "remote", "pekko.remote.artery.transport", "tcp",
        "pekko.remote.artery.canonical.hostname", NodeJvm.HOST, "pekko.remote.artery.canonical.port", 0,
        "pekko.coordinated-shutdown.run-by-jvm-shutdown-hook", "off")))
        .withFallback(ConfigFactory.defaultReference());
    return ActorSystem.create("probe-" + name, config);
  }

  /**
   * The ref {@code probe} gets back for an {@code Identify} of {@code node}'s cluster daemon,
   * empty when the answer names none or none comes within {@link #NO_ANSWER_WITHIN}; the probe
   * is stopped after.
   */
  private static Optional<ActorRef> identify(NodeJvm node, ActorSystem probe) throws InterruptedException {
    try {
      Object answer = Patterns.ask(probe.actorSelection(address(node) + "/system/cluster/core/daemon"),
          new Identify(probe.name()), NO_ANSWER_WITHIN).toCompletableFuture()
          .get(NO_ANSWER_WITHIN.toMillis() + 1000, TimeUnit.MILLISECONDS);
      return ((ActorIdentity) answer).getActorRef();
    } catch (ExecutionException | TimeoutException e) {
      System.out.println(probe.name() + ": no answer from " + node.name + " within " + NO_ANSWER_WITHIN + ": " + e);
      return Optional.empty();
    } finally {
      probe.terminate();
      probe.getWhenTerminated().toCompletableFuture().orTimeout(30, TimeUnit.SECONDS).exceptionally(e -> null).join();
    }
  }

  private static String address(NodeJvm n) {
    return "pekko://tabula@" + NodeJvm.HOST + ":" + n.clusterPort;
  }

  /** The cluster addresses {@code n}'s {@code /cluster/members} names (members, unreachable ones too). */
  private static Set<String> members(NodeJvm n) throws Exception {
    var answer = n.get("/cluster/members", VIEWER_TOKEN);
    assertEquals(200, answer.statusCode(), n.name + "'s /cluster/members: " + answer.body());
    Set<String> out = new TreeSet<>();
    Matcher m = MEMBER.matcher(answer.body());
    while (m.find()) {
      out.add(m.group(1));
    }
    return out;
  }

  /** The first lines of {@code n}'s log that match {@code pattern}, for a person to read; empty if none. */
  private static String linesMatching(NodeJvm n, Pattern pattern) {
    return String.join("\n", n.tail(100_000).lines().filter(l -> pattern.matcher(l).find()).limit(8).toList());
  }
}
