package io.tabula.bench.e2e;

import io.grpc.netty.shaded.io.netty.buffer.ByteBufAllocator;
import io.grpc.netty.shaded.io.netty.handler.ssl.OpenSsl;
import io.grpc.netty.shaded.io.netty.handler.ssl.SslContextBuilder;
import io.grpc.netty.shaded.io.netty.handler.ssl.SslProvider;
import io.tabula.bench.ResultsFile;
import io.tabula.cluster.security.PemFiles;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLEngineResult;
import javax.net.ssl.SSLException;
import javax.net.ssl.SSLParameters;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * What one TLS record costs a server's engine, never part of the test verdict: the JDK's
 * engine as a node makes it ({@link PemFiles#context}, TLS 1.3) against BoringSSL's through
 * Netty ({@code OPENSSL}, the engine grpc-java's shaded Netty carries), each wrapping a
 * record of a given size to a JDK client and unwrapping one from it, in one thread, after a
 * handshake. Heap buffers, as Pekko's TLS stage gives an engine. It answers whether another
 * engine would make the records of a call over TLS cheaper: a unary gRPC answer over Pekko
 * HTTP is three records (headers, the message, trailers), one per HTTP/2 frame.
 */
@Command(name = "tls-records", mixinStandardHelpOptions = true,
    description = "Server CPU per TLS record: the JDK's engine against BoringSSL's (Netty), side by side.")
public final class TlsRecordBench implements Callable<Integer> {
  @Option(names = "--records", description = "Records wrapped and unwrapped per size, engine and round; default: ${DEFAULT-VALUE}")
  int records = 200_000;

  @Option(names = "--rounds", description = "Rounds; the report gives each median; default: ${DEFAULT-VALUE}")
  int rounds = 3;

  @Option(names = "--sizes", split = ",", description = "Bytes of a record's content; default: 20,60,300,1100")
  int[] sizes = {20, 60, 300, 1100};

  @Option(names = "--out", description = "Markdown report written here too (default: printed only)")
  Path out;

  private static final String[] ENGINES = {"JDK", "BoringSSL (Netty)"};

  public static void main(String[] args) {
    System.exit(new CommandLine(new TlsRecordBench()).execute(args));
  }

  @Override
  public Integer call() throws Exception {
    if (!OpenSsl.isAvailable()) {
      System.err.println("tls-records: BoringSSL is not available here: " + OpenSsl.unavailabilityCause());
      return 1;
    }
    try (NodeSecurityFiles files = NodeSecurityFiles.create()) {
      // [engine][size][round] -> {wrap ns, unwrap ns}
      double[][][][] ns = new double[ENGINES.length][sizes.length][rounds][];
      for (int round = 0; round < rounds; round++) {
        for (int e = 0; e < ENGINES.length; e++) {
          // which engine goes first alternates by round
          int engine = (e + round) % ENGINES.length;
          SSLEngine server = server(engine, files);
          SSLEngine client = files.trust().createSSLEngine("localhost", 443);
          client.setUseClientMode(true);
          handshake(client, server);
          for (int s = 0; s < sizes.length; s++) {
            time(server, client, sizes[s], records / 10); // warm
            ns[engine][s][round] = time(server, client, sizes[s], records);
          }
          System.out.printf(Locale.ROOT, "round %d, %s (%s) done%n", round + 1, ENGINES[engine],
              server.getSession().getCipherSuite());
        }
      }
      String report = report(ns);
      System.out.println(report);
      if (out != null) {
        ResultsFile.write(out, report);
      }
    }
    return 0;
  }

  private static SSLEngine server(int engine, NodeSecurityFiles files) throws IOException {
    SSLEngine server;
    if (engine == 0) {
      server = PemFiles.context(files.nodeCertificate(), files.nodeKey(), null).createSSLEngine();
      SSLParameters p = server.getSSLParameters();
      p.setProtocols(new String[] {"TLSv1.3"});
      server.setSSLParameters(p);
    } else {
      server = SslContextBuilder.forServer(files.nodeCertificate().toFile(), files.nodeKey().toFile())
          .sslProvider(SslProvider.OPENSSL).protocols("TLSv1.3").build().newEngine(ByteBufAllocator.DEFAULT);
    }
    server.setUseClientMode(false);
    return server;
  }

  /** Mean ns of the server's wrap and of its unwrap of a {@code size}-byte record, over {@code n} of each. */
  private static double[] time(SSLEngine server, SSLEngine client, int size, int n) throws SSLException {
    ByteBuffer content = ByteBuffer.allocate(size);
    // The larger of the two engines' packet sizes: BoringSSL asks for less room than the JDK's engine.
    ByteBuffer net = ByteBuffer.allocate(Math.max(server.getSession().getPacketBufferSize(),
        client.getSession().getPacketBufferSize()));
    ByteBuffer app = ByteBuffer.allocate(server.getSession().getApplicationBufferSize() * 2);
    long wrap = 0;
    long unwrap = 0;
    for (int i = 0; i < n; i++) {
      content.clear();
      net.clear();
      long t0 = System.nanoTime();
      SSLEngineResult wrapped = server.wrap(content, net);
      wrap += System.nanoTime() - t0;
      if (wrapped.bytesConsumed() != size) {
        throw new SSLException("the server wrapped " + wrapped.bytesConsumed() + " bytes of " + size + ": " + wrapped);
      }
      net.flip();
      app.clear();
      unwrapAll(client, net, app);
      content.clear();
      net.clear();
      SSLEngineResult sent = client.wrap(content, net);
      if (sent.bytesConsumed() != size) {
        throw new SSLException("the client wrapped " + sent.bytesConsumed() + " bytes of " + size + ": " + sent);
      }
      net.flip();
      app.clear();
      long t1 = System.nanoTime();
      int produced = unwrapAll(server, net, app);
      unwrap += System.nanoTime() - t1;
      if (produced != size) {
        throw new SSLException("the server unwrapped " + produced + " bytes of a " + size + "-byte record");
      }
    }
    return new double[] {wrap / (double) n, unwrap / (double) n};
  }

  /** Unwraps all of {@code net} into {@code app}; returns the bytes produced; throws when an unwrap makes no progress. */
  private static int unwrapAll(SSLEngine to, ByteBuffer net, ByteBuffer app) throws SSLException {
    int produced = 0;
    while (net.hasRemaining()) {
      SSLEngineResult r = to.unwrap(net, app);
      if (r.bytesConsumed() == 0) {
        throw new SSLException("an unwrap consumed nothing: " + r);
      }
      produced += r.bytesProduced();
    }
    return produced;
  }

  /** Both engines' handshake, in memory, until neither has anything left to send. */
  private static void handshake(SSLEngine client, SSLEngine server) throws SSLException {
    ByteBuffer toServer = ByteBuffer.allocate(1 << 16);
    ByteBuffer toClient = ByteBuffer.allocate(1 << 16);
    ByteBuffer none = ByteBuffer.allocate(0);
    ByteBuffer app = ByteBuffer.allocate(1 << 16);
    client.beginHandshake();
    server.beginHandshake();
    for (int i = 0; i < 64; i++) {
      client.wrap(none, toServer);
      tasks(client);
      pass(toServer, server, app);
      server.wrap(none, toClient);
      tasks(server);
      pass(toClient, client, app);
      if (i > 4 && done(client) && done(server) && toServer.position() == 0 && toClient.position() == 0) {
        return;
      }
    }
    throw new SSLException("the in-memory handshake did not finish");
  }

  private static void pass(ByteBuffer net, SSLEngine to, ByteBuffer app) throws SSLException {
    net.flip();
    while (net.hasRemaining()) {
      SSLEngineResult r = to.unwrap(net, app);
      tasks(to);
      if (r.bytesConsumed() == 0) {
        break;
      }
    }
    net.compact();
    app.clear();
  }

  private static boolean done(SSLEngine e) {
    return e.getHandshakeStatus() == SSLEngineResult.HandshakeStatus.NOT_HANDSHAKING;
  }

  private static void tasks(SSLEngine e) {
    for (Runnable task = e.getDelegatedTask(); task != null; task = e.getDelegatedTask()) {
      task.run();
    }
  }

  private String report(double[][][][] ns) {
    StringBuilder b = new StringBuilder("| record bytes |");
    List<String> columns = new ArrayList<>();
    for (String e : ENGINES) {
      columns.add(e + ": wrap ns");
      columns.add(e + ": unwrap ns");
    }
    columns.forEach(c -> b.append(' ').append(c).append(" |"));
    b.append("\n|---:|").append("---:|".repeat(columns.size())).append('\n');
    for (int s = 0; s < sizes.length; s++) {
      b.append("| ").append(sizes[s]).append(" |");
      for (int e = 0; e < ENGINES.length; e++) {
        for (int k = 0; k < 2; k++) {
          double[] each = new double[rounds];
          for (int r = 0; r < rounds; r++) {
            each[r] = ns[e][s][r][k];
          }
          Arrays.sort(each);
          b.append(String.format(Locale.ROOT, " %.0f |", each[rounds / 2]));
        }
      }
      b.append('\n');
    }
    return b.toString();
  }
}
