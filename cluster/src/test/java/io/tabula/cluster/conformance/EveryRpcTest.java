package io.tabula.cluster.conformance;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.bigtable.admin.v2.BigtableInstanceAdminProto;
import com.google.bigtable.admin.v2.BigtableTableAdminProto;
import com.google.bigtable.v2.BigtableProto;
import com.google.cloud.bigtable.emulator.core.EmulatorController;
import com.google.longrunning.OperationsProto;
import com.google.protobuf.Descriptors;
import io.grpc.CallOptions;
import io.grpc.ClientCall;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import io.tabula.cluster.RawGrpc;
import io.tabula.cluster.TabulaNode;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code docs/api-coverage.md}'s list of every RPC is true: it has a row for each method of
 * the Cloud Bigtable data, table-admin and instance-admin services and of {@code
 * google.longrunning.Operations}, and for each row, the node and Google's bundled emulator
 * answer UNIMPLEMENTED exactly where the row says so. Each method is called once on each, with
 * an empty request (one empty message for a streaming client), and its status recorded.
 */
class EveryRpcTest {
  private static final Path DOC = Path.of("..", "docs", "api-coverage.md");
  private static final List<Descriptors.ServiceDescriptor> SERVICES = List.of(
      BigtableProto.getDescriptor().findServiceByName("Bigtable"),
      BigtableTableAdminProto.getDescriptor().findServiceByName("BigtableTableAdmin"),
      BigtableInstanceAdminProto.getDescriptor().findServiceByName("BigtableInstanceAdmin"),
      OperationsProto.getDescriptor().findServiceByName("Operations"));
  /** A row of the list: | `Service/Method` | Tabula | emulator | */
  private static final Pattern ROW = Pattern.compile("^\\| `([A-Za-z]+)/([A-Za-z]+)` \\| ([^|]*) \\| ([^|]*) \\|");

  @TempDir
  Path dir;

  @Test
  void theListOfEveryRpcSaysWhereEachPeerAnswersUnimplemented() throws Exception {
    Map<String, Status.Code> tabula;
    try (TabulaNode node = TabulaNode.start(dir, 0, 0)) {
      tabula = answers(new Peer() {
        @Override
        public int port() {
          return node.grpcPort();
        }

        @Override
        public void restart() {
          // a node that stops answering is what the list is about: its UNAVAILABLE is recorded as it is
        }
      });
    }
    Emulator emulator = new Emulator();
    Map<String, Status.Code> reference;
    try {
      reference = answers(emulator);
    } finally {
      emulator.stop();
    }
    Map<String, Status.Code> emulatorAnswers = reference;
    StringBuilder seen = new StringBuilder();
    tabula.forEach((rpc, code) -> seen.append(rpc).append(": tabula ").append(code).append(", emulator ")
        .append(emulatorAnswers.get(rpc)).append('\n'));
    System.out.print(seen);

    Map<String, String[]> rows = new TreeMap<>();
    for (String line : Files.readAllLines(DOC)) {
      Matcher m = ROW.matcher(line);
      if (m.find()) {
        rows.put(m.group(1) + "/" + m.group(2), new String[] {m.group(3).trim(), m.group(4).trim()});
      }
    }
    assertEquals(tabula.keySet(), rows.keySet(), "the list's rows against the services' methods\n" + seen);
    List<String> wrong = new ArrayList<>();
    rows.forEach((rpc, says) -> {
      if (says[0].startsWith("UNIMPLEMENTED") != (tabula.get(rpc) == Status.Code.UNIMPLEMENTED)) {
        wrong.add(rpc + ": the list says Tabula answers '" + says[0] + "', it answered " + tabula.get(rpc));
      }
      if (says[1].startsWith("UNIMPLEMENTED") != (emulatorAnswers.get(rpc) == Status.Code.UNIMPLEMENTED)) {
        wrong.add(rpc + ": the list says the emulator answers '" + says[1] + "', it answered "
            + emulatorAnswers.get(rpc));
      }
    });
    assertTrue(wrong.isEmpty(), String.join("\n", wrong));
  }

  /** A server the methods are called on. */
  private interface Peer {
    int port();

    /** Starts the server again after it stopped answering. */
    void restart() throws IOException, InterruptedException;
  }

  /** Google's bundled emulator, started again when a call brings it down (some do). */
  private static final class Emulator implements Peer {
    private EmulatorController controller;

    Emulator() throws IOException, InterruptedException {
      restart();
    }

    @Override
    public int port() {
      return controller.getPort();
    }

    @Override
    public void restart() throws IOException, InterruptedException {
      stop();
      controller = EmulatorController.createBundled();
      try {
        controller.start();
      } catch (java.util.concurrent.TimeoutException e) {
        throw new IOException("the bundled emulator did not open its port", e);
      }
    }

    void stop() {
      if (controller != null && controller.isRunning()) {
        controller.stop();
      }
    }
  }

  /**
   * Each method's status for an empty request, by {@code Service/Method} (the service's simple
   * name). A method answered UNAVAILABLE is called once more on a restarted peer: the emulator
   * exits on some requests, and the methods after it must not be charged with that.
   */
  private static Map<String, Status.Code> answers(Peer peer) throws IOException, InterruptedException {
    Map<String, Status.Code> out = new LinkedHashMap<>();
    for (Descriptors.ServiceDescriptor s : SERVICES) {
      for (Descriptors.MethodDescriptor m : s.getMethods()) {
        Status.Code code = call(peer.port(), s.getFullName(), m);
        if (code == Status.Code.UNAVAILABLE) {
          peer.restart();
          code = call(peer.port(), s.getFullName(), m);
        }
        out.put(s.getName() + "/" + m.getName(), code);
      }
    }
    return out;
  }

  /** The status of one call of {@code m} with an empty request, on a channel of its own. */
  private static Status.Code call(int port, String service, Descriptors.MethodDescriptor m)
      throws InterruptedException {
    ManagedChannel channel = ManagedChannelBuilder.forAddress("127.0.0.1", port).usePlaintext().build();
    try {
      return call(channel, service, m);
    } finally {
      channel.shutdownNow().awaitTermination(10, TimeUnit.SECONDS);
    }
  }

  private static Status.Code call(ManagedChannel channel, String service, Descriptors.MethodDescriptor m)
      throws InterruptedException {
    MethodDescriptor.MethodType type = m.isClientStreaming()
        ? (m.isServerStreaming() ? MethodDescriptor.MethodType.BIDI_STREAMING
            : MethodDescriptor.MethodType.CLIENT_STREAMING)
        : (m.isServerStreaming() ? MethodDescriptor.MethodType.SERVER_STREAMING : MethodDescriptor.MethodType.UNARY);
    ClientCall<byte[], byte[]> call = channel.newCall(RawGrpc.method(service, m.getName(), type),
        CallOptions.DEFAULT.withDeadlineAfter(10, TimeUnit.SECONDS));
    CompletableFuture<Status> closed = new CompletableFuture<>();
    call.start(new ClientCall.Listener<>() {
      @Override
      public void onMessage(byte[] message) {
        call.request(1);
      }

      @Override
      public void onClose(Status status, Metadata trailers) {
        closed.complete(status);
      }
    }, new Metadata());
    call.request(1);
    call.sendMessage(new byte[0]);
    call.halfClose();
    try {
      return closed.get(15, TimeUnit.SECONDS).getCode();
    } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
      call.cancel("no answer", e);
      return Status.Code.DEADLINE_EXCEEDED;
    }
  }
}
