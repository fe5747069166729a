package io.tabula.cluster.client;

import com.typesafe.config.ConfigFactory;
import io.tabula.client.RetrySettings;
import io.tabula.client.TabulaClient;
import io.tabula.cluster.TabulaNode;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;

/**
 * A node in the test JVM on free ports (gRPC and Management HTTP on port 0) with its data
 * in {@code dir}, and a client of it with the given retry settings. Closing closes both.
 */
final class InJvmNode implements AutoCloseable {
  final TabulaNode node;
  final TabulaClient client;

  private InJvmNode(TabulaNode node, TabulaClient client) {
    this.node = node;
    this.client = client;
  }

  static InJvmNode start(Path dir) {
    return start(dir, RetrySettings.DEFAULT);
  }

  static InJvmNode start(Path dir, RetrySettings retry) {
    return start(dir, retry, Map.of());
  }

  /** With further node settings, e.g. {@code tabula.node.durability}. */
  static InJvmNode start(Path dir, RetrySettings retry, Map<String, Object> settings) {
    Map<String, Object> all = new HashMap<>(settings);
    all.put("tabula.node.data-dir", dir.toString());
    all.put("tabula.node.grpc-port", 0);
    all.put("tabula.node.http-port", 0);
    TabulaNode node = TabulaNode.start(ConfigFactory.parseMap(all));
    return new InJvmNode(node, TabulaClient.builder().endpoint(endpoint(node)).retry(retry).build());
  }

  static String endpoint(TabulaNode node) {
    return "127.0.0.1:" + node.grpcPort();
  }

  @Override
  public void close() {
    try {
      client.close();
    } finally {
      node.close();
    }
  }
}
