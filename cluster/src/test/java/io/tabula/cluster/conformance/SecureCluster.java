package io.tabula.cluster.conformance;

import com.google.cloud.bigtable.admin.v2.BigtableTableAdminSettings;
import com.google.cloud.bigtable.data.v2.BigtableDataSettings;
import io.tabula.cluster.security.JwtFixtures;
import io.tabula.cluster.security.PemFiles;
import io.tabula.cluster.security.TestPki;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import javax.net.ssl.SSLContext;

/**
 * The files of a secured Tabula cluster in a folder, and the official clients' settings for
 * it:
 *
 * <ul>
 *   <li>one test CA ({@link TestPki}); each node's own certificate and key, naming {@code
 *       127.0.0.1}, {@code localhost} and the DNS name {@value #CLUSTER_NAME}, which all members
 *       share: Artery's TLS accepts a peer only when it chains to {@code cluster-ca-file} (the CA)
 *       and has a name in common with the node's own certificate;
 *   <li>an auth file ({@code tabula.security.auth-file}) with static tokens of {@value #ADMIN}
 *       and of {@value #READER} (who holds {@code roles/bigtable.reader} on the instance), and a
 *       Google service-account key file of {@value #SERVICE_ACCOUNT}; the service account and
 *       {@value #ADMIN} are admins;
 *   <li>the data client authenticating with the service account's key itself (grpc-java signs a
 *       JWT for each service it calls, which the nodes accept), the admin client and Management
 *       HTTP with the static token.
 * </ul>
 *
 * <p>Immutable once written; the caller owns the folder.
 */
final class SecureCluster {
  /** The DNS name every member's certificate carries. */
  static final String CLUSTER_NAME = "tabula-cluster";
  static final String ADMIN = "user:conformance-admin@example.com";
  static final String READER = "user:conformance-reader@example.com";
  static final String SERVICE_ACCOUNT = "conformance@tabula-test.iam.gserviceaccount.com";

  private final Path ca;
  private final Map<String, TestPki.KeyFiles> nodes;
  private final Path auth;
  private final Path serviceAccountKey;
  private final String adminToken;
  private final String readerToken;

  private SecureCluster(Path ca, Map<String, TestPki.KeyFiles> nodes, Path auth, Path serviceAccountKey,
      String adminToken, String readerToken) {
    this.ca = ca;
    this.nodes = Map.copyOf(nodes);
    this.auth = auth;
    this.serviceAccountKey = serviceAccountKey;
    this.adminToken = adminToken;
    this.readerToken = readerToken;
  }

  /** Writes a fresh CA, a certificate for each of {@code nodeNames}, the service account's key and the auth file to {@code dir}. */
  static SecureCluster write(Path dir, List<String> nodeNames) throws IOException {
    TestPki pki = TestPki.ca("tabula conformance CA");
    Path ca = pki.writeCertificate(dir.resolve("ca.crt"));
    Map<String, TestPki.KeyFiles> nodes = new HashMap<>();
    for (String node : nodeNames) {
      nodes.put(node, pki.issue("CN=" + node + ",O=tabula", CLUSTER_NAME, "localhost").write(dir, node));
    }
    Path key = JwtFixtures.serviceAccountFile(dir.resolve("service-account.json"), SERVICE_ACCOUNT,
        "conformance-key-1", JwtFixtures.rsa());
    String token = "admin-" + UUID.randomUUID();
    String reader = "reader-" + UUID.randomUUID();
    Path auth = Files.writeString(dir.resolve("auth.conf"), "tabula.security {\n"
        + "  tokens = [ { principal = \"" + ADMIN + "\", token = \"" + token + "\" },\n"
        + "    { principal = \"" + READER + "\", token = \"" + reader + "\" } ]\n"
        + "  service-accounts = [ \"" + key.getFileName() + "\" ]\n"
        + "  admins = [ \"" + ADMIN + "\", \"serviceAccount:" + SERVICE_ACCOUNT + "\" ]\n"
        + "  bindings = [ { role = roles/bigtable.reader, members = [ \"" + READER + "\" ] } ]\n"
        + "}\n");
    return new SecureCluster(ca, nodes, auth, key, token, reader);
  }

  /** Node {@code node}'s TLS and authentication settings (TabulaNode configuration keys). */
  Map<String, Object> nodeSettings(String node) {
    TestPki.KeyFiles files = nodes.get(node);
    Map<String, Object> out = new HashMap<>();
    out.put("tabula.node.tls.cert-file", files.cert().toString());
    out.put("tabula.node.tls.key-file", files.key().toString());
    out.put("tabula.node.tls.cluster-ca-file", ca.toString());
    out.put("tabula.security.auth-file", auth.toString());
    return out;
  }

  /** The PEM file of the CA that signed every node's certificate. */
  Path caFile() {
    return ca;
  }

  /** The static token of {@value #ADMIN}. */
  String adminToken() {
    return adminToken;
  }

  /** The static token of {@value #READER}. */
  String readerToken() {
    return readerToken;
  }

  /** The data client's settings for the node whose gRPC port is {@code port}: the service account's key. */
  BigtableDataSettings.Builder data(int port) throws IOException {
    return TlsClients.data(port, ca, TlsClients.serviceAccount(serviceAccountKey));
  }

  /** The admin client's settings for the node whose gRPC port is {@code port}: the static admin token. */
  BigtableTableAdminSettings.Builder admin(int port) throws IOException {
    return TlsClients.admin(port, ca, TlsClients.token(adminToken));
  }

  /** Management HTTP of the node whose HTTP port is {@code httpPort}: HTTPS trusting the CA, the admin token. */
  ManagementView management(int httpPort) throws IOException {
    try {
      SSLContext trust = SSLContext.getInstance("TLS");
      trust.init(null, PemFiles.trusting(ca), null);
      return new ManagementView(URI.create("https://" + ConformancePeer.LOOPBACK + ":" + httpPort),
          HttpClient.newBuilder().sslContext(trust).build(), "Bearer " + adminToken);
    } catch (GeneralSecurityException e) {
      throw new IOException("no TLS client trusting " + ca, e);
    }
  }
}
