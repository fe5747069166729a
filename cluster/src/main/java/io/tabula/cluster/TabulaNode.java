package io.tabula.cluster;

import java.nio.file.Path;

/** A running Tabula node (work in progress: the signature callers will use). */
public final class TabulaNode implements AutoCloseable {
  private TabulaNode() {}

  /** Starts a single-node Tabula on 127.0.0.1 with its data under {@code dataDir}; port 0 picks a free port. */
  public static TabulaNode start(Path dataDir, int grpcPort, int httpPort) {
    throw new UnsupportedOperationException("not built yet");
  }

  /** The port the Cloud Bigtable gRPC API is bound to. */
  public int grpcPort() {
    throw new UnsupportedOperationException("not built yet");
  }

  @Override
  public void close() {}
}
