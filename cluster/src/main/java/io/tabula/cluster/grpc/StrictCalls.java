package io.tabula.cluster.grpc;

import com.google.bigtable.v2.Bigtable;
import com.google.bigtable.v2.MutateRowRequest;
import com.google.bigtable.v2.MutateRowsRequest;
import com.google.bigtable.v2.ReadRowsRequest;
import com.google.bigtable.v2.ReadRowsResponse;
import com.google.protobuf.CodedInputStream;
import com.google.protobuf.CodedOutputStream;
import com.google.protobuf.MessageLite;
import io.grpc.Status;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.function.Supplier;
import org.apache.pekko.actor.ClassicActorSystemProvider;
import org.apache.pekko.grpc.GrpcProtocol.GrpcProtocolWriter;
import org.apache.pekko.grpc.GrpcServiceException;
import org.apache.pekko.grpc.javadsl.GrpcExceptionHandler;
import org.apache.pekko.grpc.javadsl.GrpcMarshalling;
import org.apache.pekko.grpc.javadsl.Metadata;
import org.apache.pekko.grpc.javadsl.MetadataBuilder;
import org.apache.pekko.http.javadsl.model.AttributeKeys;
import org.apache.pekko.http.javadsl.model.HttpEntities;
import org.apache.pekko.http.javadsl.model.HttpEntity;
import org.apache.pekko.http.javadsl.model.HttpHeader;
import org.apache.pekko.http.javadsl.model.HttpRequest;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.http.javadsl.model.Trailer;
import org.apache.pekko.http.javadsl.model.headers.RawHeader;
import org.apache.pekko.util.ByteString;

/**
 * The busiest data calls (MutateRows, MutateRow, and ReadRows of a few row keys) answered
 * without stream stages when the request arrived whole: the HTTP/2 layer collects a small
 * request into a strict entity ({@code pekko.http.server.http2.min-collect-strict-entity-size}),
 * this class reads its one gRPC message in place, and the answer goes out as one strict body
 * of gRPC messages followed by the status trailer. The bytes on the wire are those of the
 * generated handler's streamed answer; only the per-call stream materialization on the way
 * in and out is gone, which was a large share of a small call's CPU.
 *
 * <p>Any other request (streamed entity, compressed message, other methods, or a read that
 * streams its rows) is left to the generated handler: {@link #answer} returns empty.
 */
final class StrictCalls {
  private static final String PREFIX = "/" + Bigtable.name + "/";
  private static final String READ_ROWS = PREFIX + "ReadRows";
  private static final String MUTATE_ROWS = PREFIX + "MutateRows";
  private static final String MUTATE_ROW = PREFIX + "MutateRow";
  /** A request at least this large is parsed off the connection's thread. */
  private static final int PARSE_APART_BYTES = 16 * 1024;
  private static final int FRAME_HEADER = 5;
  /** How long a streamed request may take to arrive whole. */
  private static final long COLLECT_MILLIS = 60_000;
  private static final HttpHeader IDENTITY = RawHeader.create("grpc-encoding", "identity");
  private static final HttpHeader OK_STATUS = RawHeader.create("grpc-status", "0");
  private static final Trailer OK = Trailer.create().addHeader(OK_STATUS);

  private final DataService data;
  private final ClassicActorSystemProvider system;
  private final Executor parsing;

  StrictCalls(DataService data, ClassicActorSystemProvider system) {
    this.data = data;
    this.system = system;
    this.parsing = system.classicSystem().dispatcher();
  }

  /** The answer to {@code request}, or empty if the generated handler must take it. */
  Optional<CompletionStage<HttpResponse>> answer(HttpRequest request) {
    String path = request.getUri().path();
    if (!path.startsWith(PREFIX) || !nativeGrpc(request.entity()) || !identityMessage(request)) {
      return Optional.empty();
    }
    if (!(request.entity() instanceof HttpEntity.Strict strict)) {
      // A large MutateRows arrives streamed; collecting it costs one small stream, against the
      // generated handler's stages on the way in and out.
      if (!path.equals(MUTATE_ROWS)) {
        return Optional.empty();
      }
      return GrpcMarshalling.negotiated(request, (reader, writer) -> answered(writer,
          request.entity().toStrict(COLLECT_MILLIS, system).thenCompose(whole -> {
            ByteString body = whole.getData();
            if (!oneMessage(body)) {
              return CompletableFuture.failedFuture(new GrpcServiceException(Status.INVALID_ARGUMENT
                  .withDescription("request: expected exactly one uncompressed gRPC message")));
            }
            return started(body, () -> data.mutateRowsWhole(MutateRowsRequest.parseFrom(message(body))));
          })));
    }
    ByteString body = strict.getData();
    if (!oneMessage(body)) {
      return Optional.empty();
    }
    Call call;
    if (path.equals(READ_ROWS)) {
      ReadRowsRequest in;
      try {
        in = ReadRowsRequest.parseFrom(message(body));
      } catch (IOException e) {
        return Optional.empty();
      }
      Optional<Supplier<CompletionStage<List<ReadRowsResponse>>>> whole = data.readRowsWhole(in, metadata(request));
      if (whole.isEmpty()) {
        return Optional.empty();
      }
      call = () -> whole.get().get();
    } else if (path.equals(MUTATE_ROWS)) {
      call = () -> data.mutateRowsWhole(MutateRowsRequest.parseFrom(message(body)));
    } else if (path.equals(MUTATE_ROW)) {
      Metadata metadata = metadata(request);
      call = () -> data.mutateRow(MutateRowRequest.parseFrom(message(body)), metadata).thenApply(List::of);
    } else {
      return Optional.empty();
    }
    return GrpcMarshalling.negotiated(request, (reader, writer) -> answered(writer, started(body, call)));
  }

  private CompletionStage<HttpResponse> answered(GrpcProtocolWriter writer,
      CompletionStage<? extends List<? extends MessageLite>> answer) {
    return answer.handle((messages, error) ->
        error == null ? ok(messages, writer) : GrpcExceptionHandler.standard(error, writer, system));
  }

  /** A call's start: it parses its request, checks it and asks the tablets. */
  private interface Call {
    CompletionStage<? extends List<? extends MessageLite>> start() throws IOException;
  }

  /**
   * Starts {@code call}, here for a small request and on the dispatcher for a large one, so
   * one connection's big writes do not hold its thread while their messages are parsed.
   */
  private CompletionStage<? extends List<? extends MessageLite>> started(ByteString body, Call call) {
    if (body.size() < PARSE_APART_BYTES) {
      return guarded(call);
    }
    return CompletableFuture.supplyAsync(() -> guarded(call), parsing).thenCompose(answer -> answer);
  }

  private static CompletionStage<? extends List<? extends MessageLite>> guarded(Call call) {
    try {
      return call.start();
    } catch (IOException | RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
  }

  /** Whether the body is plain gRPC (not gRPC-Web, whose framing differs). */
  private static boolean nativeGrpc(HttpEntity entity) {
    String subType = entity.getContentType().mediaType().subType();
    return subType.equals("grpc") || subType.equals("grpc+proto");
  }

  /** Whether the request carries an uncompressed message (no encoding, or identity). */
  private static boolean identityMessage(HttpRequest request) {
    return request.getHeader("grpc-encoding").map(h -> h.value().equals("identity")).orElse(true);
  }

  /** Whether {@code body} is exactly one uncompressed length-prefixed gRPC message. */
  private static boolean oneMessage(ByteString body) {
    if (body.size() < FRAME_HEADER || body.apply(0) != 0) {
      return false;
    }
    long length = ((body.apply(1) & 0xFFL) << 24) | ((body.apply(2) & 0xFF) << 16) | ((body.apply(3) & 0xFF) << 8)
        | (body.apply(4) & 0xFF);
    return length == body.size() - FRAME_HEADER;
  }

  /** The message of a one-message body, read in place when the body is one array. */
  private static CodedInputStream message(ByteString body) {
    byte[] bytes = body.toArrayUnsafe();
    return CodedInputStream.newInstance(bytes, FRAME_HEADER, bytes.length - FRAME_HEADER);
  }

  private static Metadata metadata(HttpRequest request) {
    return MetadataBuilder.fromHeaders(request.getHeaders());
  }

  /** The messages, length-prefixed one after another in one body, then status OK as a trailer. */
  private static HttpResponse ok(List<? extends MessageLite> messages, GrpcProtocolWriter writer) {
    if (messages.isEmpty()) {
      // An empty body ends the stream with the headers, so the status goes there (trailers-only).
      return HttpResponse.create().addHeader(IDENTITY).addHeader(OK_STATUS)
          .withEntity(HttpEntities.create(writer.contentType(), ByteString.emptyByteString()));
    }
    int total = 0;
    for (MessageLite m : messages) {
      total += FRAME_HEADER + m.getSerializedSize();
    }
    byte[] body = new byte[total];
    int at = 0;
    for (MessageLite m : messages) {
      int size = m.getSerializedSize();
      body[at] = 0;
      body[at + 1] = (byte) (size >>> 24);
      body[at + 2] = (byte) (size >>> 16);
      body[at + 3] = (byte) (size >>> 8);
      body[at + 4] = (byte) size;
      CodedOutputStream out = CodedOutputStream.newInstance(body, at + FRAME_HEADER, size);
      try {
        m.writeTo(out);
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
      out.checkNoSpaceLeft();
      at += FRAME_HEADER + size;
    }
    return HttpResponse.create()
        .addHeader(IDENTITY)
        .withEntity(HttpEntities.create(writer.contentType(), ByteString.fromArrayUnsafe(body)))
        .addAttribute(AttributeKeys.trailer, OK);
  }
}
