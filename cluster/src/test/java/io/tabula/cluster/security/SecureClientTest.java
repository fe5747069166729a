package io.tabula.cluster.security;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.ByteString;
import io.grpc.Status;
import io.tabula.client.MutationResult;
import io.tabula.client.Query;
import io.tabula.client.Row;
import io.tabula.client.RowMutation;
import io.tabula.client.TabulaClient;
import io.tabula.client.TabulaException;
import io.tabula.protocol.errors.ErrorCode;
import java.io.IOException;
import java.net.InetAddress;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLServerSocket;
import javax.net.ssl.SSLSocket;
import org.apache.pekko.actor.ActorSystem;
import org.apache.pekko.stream.javadsl.Sink;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The Tabula client against a node with TLS and bearer tokens ({@link SecuredNode}): with
 * {@code tls(ca)} and {@code token(t)} every kind of call works, on every kind of channel the
 * client opens (the unary and scan channels of Pekko gRPC, the direct grpc-java ones); without
 * the token every call fails UNAUTHENTICATED, told by code and reason; a certificate the client
 * does not trust (another CA, another host) fails at once, as a rejected certificate, not
 * retried.
 *
 * <p>The client starts from {@code localhost:port} and the node's Locations service answers
 * {@code 127.0.0.1:port}, so the data calls go over connections the client opened to an
 * endpoint it learned, not to the one it was given: those carry the same TLS trust and token.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class SecureClientTest {
  private static final String ANA = "user:ana@example.com";
  private static final String TOKEN = "ana-token-0123456789";
  /** Rows of the scan and the batch: 200 of 32 KiB, more than one 4 MiB message can carry. */
  private static final int ROWS = 200;
  private static final int VALUE_BYTES = 32 * 1024;

  @TempDir
  static Path dir;
  static SecuredNode secured;
  static String seed;
  /** The clients' actor system, which runs their scans too. */
  static ActorSystem system;

  @BeforeAll
  static void start() {
    secured = SecuredNode.start(dir, Map.of(ANA, TOKEN), ANA);
    seed = "localhost:" + secured.node().grpcPort();
    system = ActorSystem.create("secure-client");
  }

  @AfterAll
  static void stop() throws Exception {
    if (system != null) {
      system.terminate();
      system.getWhenTerminated().toCompletableFuture().get(10, TimeUnit.SECONDS);
    }
    if (secured != null) {
      secured.close();
    }
  }

  private static TabulaClient.Builder client() {
    return TabulaClient.builder().endpoint(seed).tls(secured.caFile()).actorSystem(system);
  }

  @Test
  void withTheCaAndTheTokenEveryKindOfCallWorks() {
    try (TabulaClient client = client().token(TOKEN).build()) {
      client.admin().createTable("t", "f").toCompletableFuture().join();
      assertTrue(client.admin().listTables().toCompletableFuture().join().contains("t"));
      assertEquals(List.of("f"), List.copyOf(client.admin().describe("t").toCompletableFuture().join().families()
          .keySet()));

      // Single rows, on the direct channels.
      client.apply("t", RowMutation.create("a").setCell("f", "q", 1000, "one")).toCompletableFuture().join();
      assertEquals("one", client.readRow("t", "a").toCompletableFuture().join().orElseThrow().latest("f", "q")
          .orElseThrow().valueUtf8());

      // A batch: MutateRows requests of at most 4 MiB each, so several.
      ByteString value = ByteString.copyFrom(new byte[VALUE_BYTES]);
      List<RowMutation> batch = new ArrayList<>();
      for (int i = 0; i < ROWS; i++) {
        batch.add(RowMutation.create(key(i)).setCell("f", ByteString.copyFromUtf8("q"), 1000, value));
      }
      List<MutationResult> results = client.applyBatch("t", batch).toCompletableFuture().join();
      assertTrue(results.stream().allMatch(MutationResult::ok), results.toString());

      // A scan on the Pekko gRPC scan channels: 6.4 MB of rows cannot come in one 4 MiB message.
      List<Row> scanned = client.source(Query.table("t").prefix("row")).runWith(Sink.seq(), system)
          .toCompletableFuture().join();
      assertEquals(ROWS, scanned.size());
      assertEquals(VALUE_BYTES, scanned.get(ROWS - 1).cells().get(0).value().size());

      // A read of several keys, gathered whole on the direct channels.
      assertEquals(List.of(key(3), key(150)), client.readRows(Query.table("t").rowKeys(key(150), key(3)))
          .toCompletableFuture().join().stream().map(Row::keyUtf8).toList());
    }
  }

  /** Every call, whichever channel it would take, is refused by the node: code and reason UNAUTHENTICATED. */
  @Test
  void withoutTheTokenEveryCallIsUnauthenticated() {
    for (String token : new String[] {null, "someone-elses-token"}) {
      TabulaClient.Builder b = client().deadline(Duration.ofSeconds(10));
      if (token != null) {
        b.token(token);
      }
      try (TabulaClient client = b.build()) {
        List<Function<TabulaClient, CompletionStage<?>>> calls = List.of(
            c -> c.admin().createTable("refused", "f"),
            c -> c.admin().listTables(),
            c -> c.apply("t", RowMutation.create("a").setCell("f", "q", 2000, "two")),
            c -> c.readRow("t", "a"),
            c -> c.readRows(Query.table("t").rowKeys("a", "b")),
            c -> c.source(Query.table("t")).runWith(Sink.seq(), system));
        for (int i = 0; i < calls.size(); i++) {
          CompletionStage<?> call = calls.get(i).apply(client);
          CompletionException e = assertThrows(CompletionException.class, () -> call.toCompletableFuture().join());
          assertUnauthenticated(e.getCause(), "call " + i + ", token " + (token == null ? "none" : "wrong"));
        }
        List<MutationResult> batch = client.applyBatch("t", List.of(RowMutation.create("b").setCell("f", "q", 1, "x")))
            .toCompletableFuture().join();
        assertUnauthenticated(batch.get(0).error().orElseThrow(), "batch");
      }
    }
  }

  @Test
  void aNodeCertificateFromAnotherCaIsRejectedAtOnce() {
    Path other = TestPki.ca("another CA").writeCertificate(dir.resolve("other-ca.crt"));
    try (TabulaClient client = TabulaClient.builder().endpoint(seed).tls(other).token(TOKEN).actorSystem(system)
        .build()) {
      assertRejected(() -> client.readRow("t", "a"), "PKIX");
      assertRejected(() -> client.admin().listTables(), "PKIX");
    }
  }

  /** The client checks the certificate names the host it connects to: a node's certificate for another host fails. */
  @Test
  void aCertificateForAnotherHostIsRejected() throws Exception {
    TestPki ca = TestPki.ca("host-check CA");
    Path caFile = ca.writeCertificate(dir.resolve("host-check-ca.crt"));
    TestPki.Issued elsewhere = ca.issueFor("CN=elsewhere", "elsewhere.example");
    KeyStore store = KeyStore.getInstance("PKCS12");
    store.load(null, null);
    store.setKeyEntry("node", elsewhere.keys().getPrivate(), new char[0], new Certificate[] {elsewhere.certificate()});
    KeyManagerFactory keys = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
    keys.init(store, new char[0]);
    SSLContext context = SSLContext.getInstance("TLS");
    context.init(keys.getKeyManagers(), null, null);
    try (SSLServerSocket server = (SSLServerSocket) context.getServerSocketFactory().createServerSocket(0, 50,
        InetAddress.getLoopbackAddress())) {
      Thread handshakes = new Thread(() -> {
        while (!server.isClosed()) {
          try (SSLSocket s = (SSLSocket) server.accept()) {
            s.startHandshake();
          } catch (IOException e) {
            // the client refuses the certificate and drops the handshake; the next one is accepted
          }
        }
      }, "handshakes");
      handshakes.setDaemon(true);
      handshakes.start();
      try (TabulaClient client = TabulaClient.builder().endpoint("127.0.0.1:" + server.getLocalPort()).tls(caFile)
          .token(TOKEN).actorSystem(system).build()) {
        assertRejected(() -> client.readRow("t", "a"), "127.0.0.1");
      }
    }
  }

  private static void assertRejected(java.util.function.Supplier<CompletionStage<?>> call, String detail) {
    CompletionException e = assertThrows(CompletionException.class, () -> call.get().toCompletableFuture().join());
    TabulaException t = assertInstanceOf(TabulaException.class, e.getCause());
    assertTrue(t.isCertificateRejected(), t::toString);
    assertTrue(t.isConnectionFailure(), t::toString);
    assertFalse(t.isRetryable(), t::toString);
    assertFalse(t.getMessage().contains("after"), "failed at the first attempt: " + t.getMessage());
    assertTrue(t.description().startsWith("the node's TLS certificate was not accepted"), t.description());
    assertTrue(t.description().contains(detail), t.description());
  }

  private static void assertUnauthenticated(Throwable failure, String what) {
    TabulaException t = assertInstanceOf(TabulaException.class, failure, what);
    assertEquals(Status.Code.UNAUTHENTICATED, t.code(), what + ": " + t);
    assertEquals(Optional.of(ErrorCode.UNAUTHENTICATED), t.reason(), what + ": " + t);
    assertFalse(t.getMessage().contains(TOKEN), t.getMessage());
  }

  private static String key(int i) {
    return String.format("row%04d", i);
  }
}
