package io.tabula.cluster.security;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import com.google.bigtable.admin.v2.ColumnFamily;
import com.google.bigtable.admin.v2.CreateTableRequest;
import com.google.bigtable.admin.v2.GetTableRequest;
import com.google.bigtable.admin.v2.ListTablesRequest;
import com.google.bigtable.admin.v2.Table;
import com.google.bigtable.v2.MutateRowRequest;
import com.google.bigtable.v2.Mutation;
import com.google.bigtable.v2.ReadRowsRequest;
import com.google.protobuf.ByteString;
import com.google.protobuf.MessageLite;
import com.typesafe.config.ConfigFactory;
import io.grpc.CallOptions;
import io.grpc.ChannelCredentials;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor.MethodType;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.TlsChannelCredentials;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.MetadataUtils;
import io.tabula.cluster.RawGrpc;
import io.tabula.cluster.TabulaNode;
import java.io.IOException;
import java.math.BigInteger;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocket;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.LoggerFactory;

/**
 * A node with TLS, static tokens, an instance policy and client certificates, in this JVM
 * on free ports, called over real TLS sockets: what each role may do on the gRPC port and
 * Management HTTP, what a call without good credentials gets (UNAUTHENTICATED before its
 * body is read), the audit log, and a certificate rotated under a running node.
 */
class SecureNodeTest {
  private static final String PROJECT = "projects/p/instances/i";
  private static final String DATA = "google.bigtable.v2.Bigtable";
  private static final String ADMIN = "google.bigtable.admin.v2.BigtableTableAdmin";
  private static final Map<String, String> TOKENS = Map.of(
      "admin", "admin-token-0123456789", "user", "user-token-0123456789", "reader", "reader-token-0123456789",
      "viewer", "viewer-token-0123456789", "nobody", "nobody-token-0123456789");

  @TempDir
  static Path dir;
  static TestPki ca;
  static TestPki.KeyFiles nodeFiles;
  static Path caFile;
  static TabulaNode node;
  static ManagedChannel tls;
  static ListAppender<ILoggingEvent> audit = new ListAppender<>();

  @BeforeAll
  static void start() throws IOException {
    ca = TestPki.ca("tabula test CA");
    caFile = ca.writeCertificate(dir.resolve("ca.crt"));
    nodeFiles = ca.issue("CN=node1,O=tabula").write(dir, "node");
    Path auth = dir.resolve("auth.conf");
    StringBuilder tokens = new StringBuilder();
    TOKENS.forEach((who, token) -> tokens.append("{ principal = \"user:").append(who).append("@example.com\", token = \"")
        .append(token).append("\" }\n"));
    Files.writeString(auth, "tabula.security {\n tokens = [\n" + tokens + "]\n admins = [\"user:admin@example.com\"]\n"
        + " bindings = [\n { role = roles/bigtable.user, members = [\"user:user@example.com\"] }\n"
        + " { role = roles/bigtable.reader, members = [\"user:reader@example.com\", \"cert:O=example,CN=carol\"] }\n"
        + " { role = roles/bigtable.viewer, members = [\"user:viewer@example.com\"] }\n ]\n}\n");
    Map<String, Object> settings = new HashMap<>();
    settings.put("tabula.node.data-dir", dir.resolve("data").toString());
    settings.put("tabula.node.grpc-port", 0);
    settings.put("tabula.node.http-port", 0);
    settings.put("tabula.node.tls.cert-file", nodeFiles.cert().toString());
    settings.put("tabula.node.tls.key-file", nodeFiles.key().toString());
    settings.put("tabula.node.tls.client-ca-file", caFile.toString());
    settings.put("tabula.node.tls.check-files-every", "200ms");
    settings.put("tabula.security.auth-file", auth.toString());
    Logger auditLog = (Logger) LoggerFactory.getLogger(Audit.LOGGER);
    audit.start();
    auditLog.addAppender(audit);
    node = TabulaNode.start(ConfigFactory.parseMap(settings));
    tls = channel(TlsChannelCredentials.newBuilder().trustManager(caFile.toFile()).build());
    unary(tls, ADMIN, "CreateTable", CreateTableRequest.newBuilder().setParent(PROJECT).setTableId("t")
        .setTable(Table.newBuilder().putColumnFamilies("f", ColumnFamily.getDefaultInstance())).build(), "admin");
  }

  @AfterAll
  static void stop() throws InterruptedException {
    if (tls != null) {
      tls.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }
    if (node != null) {
      node.close();
    }
    ((Logger) LoggerFactory.getLogger(Audit.LOGGER)).detachAppender(audit);
  }

  @Test
  void aPlaintextClientGetsNoAnswerFromATlsPort() throws InterruptedException {
    ManagedChannel plain = channel(InsecureChannelCredentials.create());
    try {
      StatusRuntimeException e = assertThrows(StatusRuntimeException.class, () -> unary(plain, ADMIN, "ListTables",
          ListTablesRequest.newBuilder().setParent(PROJECT).build(), "admin"));
      assertEquals(Status.Code.UNAVAILABLE, e.getStatus().getCode(), e.toString());
    } finally {
      plain.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }
  }

  /** Each role against calls of each kind: what Cloud Bigtable's roles allow, and PERMISSION_DENIED naming the rest. */
  @Test
  void eachRoleMayDoWhatItsPermissionsAllow() {
    record Expect(String who, String service, String method, MessageLite request, String deniedPermission) {}
    MessageLite create = CreateTableRequest.newBuilder().setParent(PROJECT).setTableId("made-by-test")
        .setTable(Table.getDefaultInstance()).build();
    MessageLite get = GetTableRequest.newBuilder().setName(PROJECT + "/tables/t").build();
    MessageLite write = MutateRowRequest.newBuilder().setTableName(PROJECT + "/tables/t").setRowKey(ByteString
        .copyFromUtf8("r")).addMutations(Mutation.newBuilder().setSetCell(Mutation.SetCell.newBuilder()
        .setFamilyName("f").setColumnQualifier(ByteString.copyFromUtf8("q")).setValue(ByteString.copyFromUtf8("v"))))
        .build();
    MessageLite read = ReadRowsRequest.newBuilder().setTableName(PROJECT + "/tables/t").build();
    List<Expect> table = List.of(
        new Expect("viewer", ADMIN, "GetTable", get, null),
        new Expect("viewer", DATA, "ReadRows", read, "bigtable.tables.readRows"),
        new Expect("viewer", DATA, "MutateRow", write, "bigtable.tables.mutateRows"),
        new Expect("reader", ADMIN, "GetTable", get, null),
        new Expect("reader", DATA, "ReadRows", read, null),
        new Expect("reader", DATA, "MutateRow", write, "bigtable.tables.mutateRows"),
        new Expect("reader", ADMIN, "CreateTable", create, "bigtable.tables.create"),
        new Expect("user", DATA, "MutateRow", write, null),
        new Expect("user", DATA, "ReadRows", read, null),
        new Expect("user", ADMIN, "CreateTable", create, "bigtable.tables.create"),
        new Expect("nobody", ADMIN, "GetTable", get, "bigtable.tables.get"),
        new Expect("nobody", DATA, "ReadRows", read, "bigtable.tables.readRows"),
        new Expect("admin", DATA, "MutateRow", write, null),
        new Expect("admin", ADMIN, "CreateTable", create, null));
    for (Expect x : table) {
      String what = x.who + " " + x.method;
      if (x.deniedPermission == null) {
        call(tls, x.service, x.method, x.request, x.who);
      } else {
        StatusRuntimeException e = assertThrows(StatusRuntimeException.class,
            () -> call(tls, x.service, x.method, x.request, x.who), what);
        assertEquals(Status.Code.PERMISSION_DENIED, e.getStatus().getCode(), what + ": " + e);
        assertTrue(e.getStatus().getDescription().contains(x.deniedPermission), what + ": " + e);
        assertTrue(auditLines().stream().anyMatch(l -> l.contains("principal=user:" + x.who + "@example.com")
            && l.contains("decision=DENIED") && l.contains(x.method)), what + " not in the audit log: " + auditLines());
      }
    }
    assertTrue(auditLines().stream().anyMatch(l -> l.contains("principal=user:admin@example.com")
        && l.contains("CreateTable") && l.contains("decision=ALLOWED")), String.join("\n", auditLines()));
  }

  /**
   * A method named with a trailing or doubled slash reaches no handler: Pekko gRPC's handlers
   * find a method by the path's non-empty segments, so such a path would otherwise run the
   * method without the guard's check of it.
   */
  @Test
  void aMethodNamedWithExtraSlashesIsNoMethod() {
    byte[] write = MutateRowRequest.newBuilder().setTableName(PROJECT + "/tables/t").setRowKey(ByteString
        .copyFromUtf8("slashed")).addMutations(Mutation.newBuilder().setSetCell(Mutation.SetCell.newBuilder()
        .setFamilyName("f").setColumnQualifier(ByteString.copyFromUtf8("q")).setValue(ByteString.copyFromUtf8("v"))))
        .build().toByteArray();
    for (String name : List.of(DATA + "/MutateRow/", DATA + "//MutateRow", "/" + DATA + "/MutateRow")) {
      io.grpc.MethodDescriptor<byte[], byte[]> m = io.grpc.MethodDescriptor.<byte[], byte[]>newBuilder()
          .setType(MethodType.UNARY).setFullMethodName(name).setRequestMarshaller(RawGrpc.BYTES)
          .setResponseMarshaller(RawGrpc.BYTES).build();
      StatusRuntimeException e = assertThrows(StatusRuntimeException.class, () -> ClientCalls.blockingUnaryCall(
          authorized(tls, "viewer").newCall(m, CallOptions.DEFAULT.withDeadlineAfter(10, TimeUnit.SECONDS)), write),
          name);
      assertEquals(Status.Code.UNIMPLEMENTED, e.getStatus().getCode(), name + ": " + e);
    }
    assertEquals(0, rows(tls, ReadRowsRequest.newBuilder().setTableName(PROJECT + "/tables/t").setRows(
        com.google.bigtable.v2.RowSet.newBuilder().addRowKeys(ByteString.copyFromUtf8("slashed"))).build(), "admin"));
  }

  /** Missing, malformed, unknown and oversized credentials: UNAUTHENTICATED with a reason, and no token in the log. */
  @Test
  void callsWithoutGoodCredentialsAreUnauthenticated() {
    MessageLite list = ListTablesRequest.newBuilder().setParent(PROJECT).build();
    Map<String, String> headers = new java.util.LinkedHashMap<>();
    headers.put("none", null);
    headers.put("unknown token", "Bearer not-a-token-anyone-has");
    headers.put("basic", "Basic dXNlcjpwYXNz");
    headers.put("empty bearer", "Bearer ");
    headers.put("garbage", "Bearer !!{}garbage.with.dots");
    headers.put("100 KB", "Bearer " + "x".repeat(100 * 1024));
    for (Map.Entry<String, String> h : headers.entrySet()) {
      StatusRuntimeException e = assertThrows(StatusRuntimeException.class,
          () -> ClientCalls.blockingUnaryCall(withAuthorization(tls, h.getValue()).newCall(RawGrpc.method(ADMIN,
              "ListTables", MethodType.UNARY), CallOptions.DEFAULT.withDeadlineAfter(10, TimeUnit.SECONDS)),
              list.toByteArray()), h.getKey());
      assertEquals(Status.Code.UNAUTHENTICATED, e.getStatus().getCode(), h.getKey() + ": " + e);
      assertFalse(e.getStatus().getDescription() == null || e.getStatus().getDescription().isBlank(), h.getKey());
    }
    for (String line : auditLines()) {
      assertFalse(line.contains("not-a-token-anyone-has") || line.contains("-token-0123456789"), line);
    }
  }

  /**
   * Hostile authorization headers, seeded ({@code -Dtabula.seed=N} replays one run), sent from
   * four threads while an admin keeps calling: every hostile call is answered UNAUTHENTICATED,
   * every admin call succeeds, and the node logs no warning or error (the audit log keeps at most
   * a line a second of them).
   */
  @Test
  void hostileAuthorizationHeadersAreAllAnsweredWhileOthersAreServed() throws Exception {
    long seed = Long.getLong("tabula.seed", System.nanoTime());
    Logger root = (Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
    ListAppender<ILoggingEvent> all = new ListAppender<>();
    all.start();
    root.addAppender(all);
    int auditBefore = auditLines().size();
    java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(4);
    try {
      List<java.util.concurrent.Future<Integer>> hostile = new java.util.ArrayList<>();
      for (int t = 0; t < 4; t++) {
        java.util.Random r = new java.util.Random(seed + t);
        hostile.add(pool.submit(() -> {
          int answered = 0;
          for (int i = 0; i < 250; i++) {
            String header = hostileHeader(r);
            try {
              unaryWith(header);
              throw new AssertionError("a hostile header was let in: " + header.substring(0, Math.min(80,
                  header.length())));
            } catch (StatusRuntimeException e) {
              assertEquals(Status.Code.UNAUTHENTICATED, e.getStatus().getCode(), "seed " + seed + ": " + e);
              answered++;
            }
          }
          return answered;
        }));
      }
      int served = 0;
      while (!hostile.stream().allMatch(java.util.concurrent.Future::isDone)) {
        unary(tls, ADMIN, "ListTables", ListTablesRequest.newBuilder().setParent(PROJECT).build(), "admin");
        served++;
      }
      int answered = 0;
      for (java.util.concurrent.Future<Integer> f : hostile) {
        answered += f.get(2, TimeUnit.MINUTES);
      }
      assertEquals(1000, answered, "seed " + seed);
      assertTrue(served > 0);
      List<String> loud = new java.util.ArrayList<>();
      synchronized (all.list) {
        all.list.stream().filter(e -> e.getLevel().isGreaterOrEqual(ch.qos.logback.classic.Level.WARN))
            .forEach(e -> loud.add(e.getLoggerName() + ": " + e.getFormattedMessage()));
      }
      assertEquals(List.of(), loud, "seed " + seed + ": the node's log stays quiet");
      assertTrue(auditLines().size() - auditBefore < 100, "seed " + seed + ": unauthenticated calls are rate-limited"
          + " in the audit log");
      System.out.println("hostile headers: seed " + seed + ", 1000 answered UNAUTHENTICATED while " + served
          + " admin calls were served");
    } finally {
      pool.shutdownNow();
      root.detachAppender(all);
    }
  }

  /** A header an attacker might send: noise, forged JWTs, an unsigned one, oversized ones. */
  private static String hostileHeader(java.util.Random r) {
    java.util.Base64.Encoder b64 = java.util.Base64.getUrlEncoder().withoutPadding();
    return switch (r.nextInt(6)) {
      case 0 -> "Bearer " + printable(r, r.nextInt(200));
      case 1 -> "Bearer " + b64.encodeToString("{\"alg\":\"none\",\"typ\":\"JWT\"}".getBytes())
          + "." + b64.encodeToString(("{\"sub\":\"admin\",\"exp\":" + (System.currentTimeMillis() / 1000 + 3600)
          + "}").getBytes()) + ".";
      case 2 -> "Bearer " + b64.encodeToString("{\"alg\":\"RS256\",\"kid\":\"k\"}".getBytes()) + "."
          + b64.encodeToString(printable(r, 50).getBytes()) + "." + b64.encodeToString(new byte[256]);
      case 3 -> "Bearer " + "A".repeat(8 * 1024 + r.nextInt(90 * 1024));
      case 4 -> printable(r, r.nextInt(100));
      default -> "Bearer " + TOKENS.get("admin") + printable(r, 1 + r.nextInt(3));
    };
  }

  private static String printable(java.util.Random r, int n) {
    StringBuilder b = new StringBuilder(n);
    for (int i = 0; i < n; i++) {
      b.append((char) (0x21 + r.nextInt(0x7e - 0x21)));
    }
    return b.toString();
  }

  private static void unaryWith(String authorization) {
    ClientCalls.blockingUnaryCall(withAuthorization(tls, authorization).newCall(RawGrpc.method(ADMIN, "ListTables",
        MethodType.UNARY), CallOptions.DEFAULT.withDeadlineAfter(30, TimeUnit.SECONDS)),
        ListTablesRequest.newBuilder().setParent(PROJECT).build().toByteArray());
  }

  @Test
  void aClientCertificateIsAPrincipal() throws Exception {
    TestPki.KeyFiles carol = ca.issue("CN=carol,O=example").write(dir, "carol");
    ManagedChannel withCertificate = channel(TlsChannelCredentials.newBuilder().trustManager(caFile.toFile())
        .keyManager(carol.cert().toFile(), carol.key().toFile()).build());
    TestPki stranger = TestPki.ca("another CA");
    TestPki.KeyFiles mallory = stranger.issue("CN=carol,O=example").write(dir, "mallory");
    ManagedChannel forged = channel(TlsChannelCredentials.newBuilder().trustManager(caFile.toFile())
        .keyManager(mallory.cert().toFile(), mallory.key().toFile()).build());
    try {
      ReadRowsRequest read = ReadRowsRequest.newBuilder().setTableName(PROJECT + "/tables/t").build();
      rows(withCertificate, read, null);
      StatusRuntimeException denied = assertThrows(StatusRuntimeException.class, () -> unary(withCertificate, DATA,
          "MutateRow", MutateRowRequest.newBuilder().setTableName(PROJECT + "/tables/t").setRowKey(ByteString
              .copyFromUtf8("r")).build(), null));
      assertEquals(Status.Code.PERMISSION_DENIED, denied.getStatus().getCode(), denied.toString());
      assertTrue(denied.getStatus().getDescription().contains("cert:O=example,CN=carol"), denied.toString());
      StatusRuntimeException e = assertThrows(StatusRuntimeException.class, () -> rows(forged, read, null));
      assertNotEquals(Status.Code.OK, e.getStatus().getCode());
    } finally {
      withCertificate.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
      forged.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }
  }

  @Test
  void managementHttpAsksForTokensExceptForHealth() throws Exception {
    SSLContext trust = SSLContext.getInstance("TLS");
    trust.init(null, PemFiles.trusting(caFile), null);
    HttpClient http = HttpClient.newBuilder().sslContext(trust).connectTimeout(Duration.ofSeconds(5)).build();
    String base = "https://localhost:" + node.httpPort();
    assertEquals(200, get(http, base + "/alive", null).statusCode());
    assertEquals(401, get(http, base + "/tabula/nodes", null).statusCode());
    assertEquals(401, get(http, base + "/tabula/nodes", "Bearer wrong").statusCode());
    assertEquals(403, get(http, base + "/tabula/nodes", "Bearer " + TOKENS.get("nobody")).statusCode());
    assertEquals(200, get(http, base + "/tabula/nodes", "Bearer " + TOKENS.get("viewer")).statusCode());
    assertEquals(200, get(http, base + "/metrics", "Bearer " + TOKENS.get("viewer")).statusCode());
    HttpResponse<String> drain = http.send(HttpRequest.newBuilder(URI.create(base + "/tabula/nodes/node1/drain"))
        .header("Authorization", "Bearer " + TOKENS.get("viewer")).POST(HttpRequest.BodyPublishers.noBody()).build(),
        HttpResponse.BodyHandlers.ofString());
    assertEquals(403, drain.statusCode(), drain.body());
    assertTrue(drain.body().contains("tabula.nodes.manage"), drain.body());
    assertTrue(get(http, base + "/console/", null).statusCode() == 200);
  }

  /** A certificate replaced on disk serves new connections without a restart. */
  @Test
  void aRotatedCertificateServesNewConnections() throws Exception {
    BigInteger before = serverCertificate(node.grpcPort()).getSerialNumber();
    TestPki.Issued next = ca.issue("CN=node1,O=tabula");
    next.write(dir, "node"); // the same file names the node was started with
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    BigInteger after = before;
    while (after.equals(before) && System.nanoTime() < deadline) {
      Thread.sleep(100);
      after = serverCertificate(node.grpcPort()).getSerialNumber();
    }
    assertEquals(next.certificate().getSerialNumber(), after);
    // Old connections are not cut, and calls go on over new ones.
    unary(tls, ADMIN, "ListTables", ListTablesRequest.newBuilder().setParent(PROJECT).build(), "admin");
    ManagedChannel fresh = channel(TlsChannelCredentials.newBuilder().trustManager(caFile.toFile()).build());
    try {
      unary(fresh, ADMIN, "ListTables", ListTablesRequest.newBuilder().setParent(PROJECT).build(), "admin");
    } finally {
      fresh.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }
  }

  private static X509Certificate serverCertificate(int port) throws Exception {
    SSLContext trust = SSLContext.getInstance("TLS");
    trust.init(null, PemFiles.trusting(caFile), null);
    try (SSLSocket s = (SSLSocket) trust.getSocketFactory().createSocket("127.0.0.1", port)) {
      s.startHandshake();
      return (X509Certificate) s.getSession().getPeerCertificates()[0];
    }
  }

  private static HttpResponse<String> get(HttpClient http, String url, String authorization) throws Exception {
    HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(10)).GET();
    if (authorization != null) {
      b.header("Authorization", authorization);
    }
    return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
  }

  private static List<String> auditLines() {
    synchronized (audit.list) {
      return audit.list.stream().map(ILoggingEvent::getFormattedMessage).toList();
    }
  }

  private static ManagedChannel channel(ChannelCredentials credentials) {
    return Grpc.newChannelBuilderForAddress("localhost", node.grpcPort(), credentials).build();
  }


  /** A unary or (for ReadRows) streaming call as {@code who} (null: no token). */
  private static void call(ManagedChannel ch, String service, String method, MessageLite request, String who) {
    if (method.equals("ReadRows")) {
      rows(ch, request, who);
    } else {
      unary(ch, service, method, request, who);
    }
  }

  private static byte[] unary(ManagedChannel ch, String service, String method, MessageLite request, String who) {
    return ClientCalls.blockingUnaryCall(authorized(ch, who).newCall(RawGrpc.method(service, method, MethodType.UNARY),
        CallOptions.DEFAULT.withDeadlineAfter(10, TimeUnit.SECONDS)), request.toByteArray());
  }

  private static int rows(ManagedChannel ch, MessageLite request, String who) {
    Iterator<byte[]> it = ClientCalls.blockingServerStreamingCall(authorized(ch, who).newCall(RawGrpc.method(DATA,
        "ReadRows", MethodType.SERVER_STREAMING), CallOptions.DEFAULT.withDeadlineAfter(10, TimeUnit.SECONDS)),
        request.toByteArray());
    int n = 0;
    while (it.hasNext()) {
      it.next();
      n++;
    }
    return n;
  }

  private static io.grpc.Channel authorized(ManagedChannel ch, String who) {
    return withAuthorization(ch, who == null ? null : "Bearer " + TOKENS.get(who));
  }

  /** {@code ch} sending {@code authorization} as it is (null: no such header). */
  private static io.grpc.Channel withAuthorization(ManagedChannel ch, String authorization) {
    if (authorization == null) {
      return ch;
    }
    Metadata m = new Metadata();
    m.put(Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER), authorization);
    return io.grpc.ClientInterceptors.intercept(ch, MetadataUtils.newAttachHeadersInterceptor(m));
  }
}
