package io.tabula.cluster.security;

import com.typesafe.config.ConfigFactory;
import io.tabula.cluster.TabulaNode;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;

/**
 * A node in the test JVM on free ports with TLS on its gRPC port and Management HTTP (a
 * certificate for {@code localhost} and {@code 127.0.0.1} from a test CA) and bearer tokens:
 * {@code tokens} maps each principal ({@code user:ana@example.com}) to its token, and {@code
 * admins} hold every permission. {@link #caFile} is the CA a client trusts. Closing stops the
 * node.
 */
public final class SecuredNode implements AutoCloseable {
  private final TabulaNode node;
  private final Path caFile;

  private SecuredNode(TabulaNode node, Path caFile) {
    this.node = node;
    this.caFile = caFile;
  }

  /** Starts the node with its files (certificates, auth file, data) in {@code dir}. */
  public static SecuredNode start(Path dir, Map<String, String> tokens, String... admins) {
    TestPki ca = TestPki.ca("tabula test CA");
    Path caFile = ca.writeCertificate(dir.resolve("ca.crt"));
    TestPki.KeyFiles nodeFiles = ca.issue("CN=node1,O=tabula").write(dir, "node");
    StringBuilder auth = new StringBuilder("tabula.security {\n tokens = [\n");
    tokens.forEach((principal, token) -> auth.append("  { principal = \"").append(principal).append("\", token = \"")
        .append(token).append("\" }\n"));
    auth.append(" ]\n admins = [");
    for (int i = 0; i < admins.length; i++) {
      auth.append(i == 0 ? "" : ", ").append('"').append(admins[i]).append('"');
    }
    auth.append("]\n}\n");
    Path authFile = dir.resolve("auth.conf");
    try {
      Files.writeString(authFile, auth);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    Map<String, Object> settings = new HashMap<>();
    settings.put("tabula.node.data-dir", dir.resolve("data").toString());
    settings.put("tabula.node.grpc-port", 0);
    settings.put("tabula.node.http-port", 0);
    settings.put("tabula.node.tls.cert-file", nodeFiles.cert().toString());
    settings.put("tabula.node.tls.key-file", nodeFiles.key().toString());
    settings.put("tabula.security.auth-file", authFile.toString());
    return new SecuredNode(TabulaNode.start(ConfigFactory.parseMap(settings)), caFile);
  }

  public TabulaNode node() {
    return node;
  }

  /** The PEM file of the CA that signed the node's certificate. */
  public Path caFile() {
    return caFile;
  }

  @Override
  public void close() {
    node.close();
  }
}
