package io.tabula.cluster.grpc;

import com.google.bigtable.v2.Bigtable;
import com.google.bigtable.v2.MutateRowRequest;
import com.google.bigtable.v2.MutateRowsRequest;
import com.google.bigtable.v2.ReadRowsRequest;
import com.google.bigtable.v2.ReadRowsResponse;
import com.google.protobuf.CodedInputStream;
import com.google.protobuf.CodedOutputStream;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.MessageLite;
import io.grpc.Status;
import io.tabula.persistence.encoding.ByteSink;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;
import org.apache.pekko.actor.ClassicActorSystemProvider;
import org.apache.pekko.grpc.GrpcProtocol.GrpcProtocolWriter;
import org.apache.pekko.grpc.GrpcServiceException;
import org.apache.pekko.grpc.javadsl.GrpcExceptionHandler;
import org.apache.pekko.grpc.javadsl.GrpcMarshalling;
import org.apache.pekko.grpc.javadsl.Metadata;
import org.apache.pekko.grpc.javadsl.MetadataBuilder;
import org.apache.pekko.http.scaladsl.model.EntityStreamSizeException;
import org.apache.pekko.japi.function.Function;
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
 * without stream stages: a request that came in one HTTP/2 frame arrives as a strict entity
 * ({@code pekko.http.server.http2.min-collect-strict-entity-size}), a larger one is collected
 * here, this class reads its one gRPC message in place, and the answer goes out as one strict body
 * of gRPC messages followed by the status trailer. The bytes on the wire are those of the
 * generated handler's streamed answer; only the per-call stream materialization on the way
 * in and out is gone, which was a large share of a small call's CPU.
 *
 * <p>Any other request (compressed message, gRPC-Web, other methods, or a read that streams
 * its rows) goes to the generated handler, collected or not.
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
  /** The largest request collected whole (Cloud Bigtable's limit for a MutateRows request). */
  static final long MAX_REQUEST_BYTES = 256L << 20;
  private static final HttpHeader IDENTITY = RawHeader.create("grpc-encoding", "identity");
  private static final HttpHeader OK_STATUS = RawHeader.create("grpc-status", "0");
  private static final Trailer OK = Trailer.create().addHeader(OK_STATUS);

  private final DataService data;
  private final ClassicActorSystemProvider system;
  private final Executor parsing;
  private final Function<HttpRequest, CompletionStage<HttpResponse>> generated;

  /**
   * @param generated the generated handlers, for every request this class does not answer
   */
  StrictCalls(DataService data, ClassicActorSystemProvider system,
      Function<HttpRequest, CompletionStage<HttpResponse>> generated) {
    this.data = data;
    this.system = system;
    this.parsing = system.classicSystem().dispatcher();
    this.generated = generated;
  }

  /** Answers {@code request}, here or through the generated handlers. */
  CompletionStage<HttpResponse> handle(HttpRequest request) throws Exception {
    String path = request.getUri().path();
    if (!(path.equals(READ_ROWS) || path.equals(MUTATE_ROWS) || path.equals(MUTATE_ROW))
        || !nativeGrpc(request.entity()) || !identityMessage(request)) {
      return generated.apply(request);
    }
    Optional<GrpcProtocolWriter> negotiated = writerFor(request);
    if (negotiated.isEmpty()) {
      return generated.apply(request);
    }
    GrpcProtocolWriter writer = negotiated.get();
    if (request.entity() instanceof HttpEntity.Strict strict) {
      return answer(request, strict.getData(), writer);
    }
    return request.entity().toStrict(COLLECT_MILLIS, MAX_REQUEST_BYTES, system).handle((whole, error) -> {
      if (error != null) {
        return CompletableFuture.completedFuture(GrpcExceptionHandler.standard(collectionFailure(error), writer,
            system));
      }
      try {
        return answer(request.withEntity(whole), whole.getData(), writer);
      } catch (Exception e) {
        return CompletableFuture.<HttpResponse>failedFuture(e);
      }
    }).thenCompose(answer -> answer);
  }

  /**
   * The writer of the answer as Pekko gRPC negotiates it (content type, message encoding), or
   * empty when negotiation fails: the generated handlers then answer that failure.
   */
  private static Optional<GrpcProtocolWriter> writerFor(HttpRequest request) {
    return GrpcMarshalling.negotiated(request, (reader, writer) -> CompletableFuture.completedFuture(writer))
        .map(CompletionStage::toCompletableFuture)
        .filter(w -> w.isDone() && !w.isCompletedExceptionally())
        .map(CompletableFuture::join);
  }

  /** Answers a request whose body is all here, or hands it (whole) to the generated handlers. */
  private CompletionStage<HttpResponse> answer(HttpRequest request, ByteString received, GrpcProtocolWriter writer)
      throws Exception {
    String path = request.getUri().path();
    byte[] body = received.toArrayUnsafe();
    if (!oneMessage(body)) {
      return generated.apply(request);
    }
    Call call;
    if (path.equals(READ_ROWS)) {
      ReadRowsRequest in;
      try {
        in = ReadRowsRequest.parseFrom(message(body));
      } catch (IOException e) {
        return generated.apply(request);
      }
      Optional<Supplier<CompletionStage<List<ReadRowsResponse>>>> whole = data.readRowsWhole(in, metadata(request));
      if (whole.isEmpty()) {
        return generated.apply(request);
      }
      call = () -> whole.get().get();
    } else if (path.equals(MUTATE_ROWS)) {
      call = () -> data.mutateRowsWhole(MutateRowsRequest.parseFrom(message(body)));
    } else {
      Metadata metadata = metadata(request);
      call = () -> data.mutateRow(MutateRowRequest.parseFrom(message(body)), metadata).thenApply(List::of);
    }
    return started(body, call).handle((messages, error) -> {
      if (error == null) {
        try {
          return ok(messages, writer);
        } catch (RuntimeException e) {
          return GrpcExceptionHandler.standard(e, writer, system);
        }
      }
      return GrpcExceptionHandler.standard(error, writer, system);
    });
  }

  /** The gRPC error for a request that could not be collected whole. */
  private static Throwable collectionFailure(Throwable error) {
    Throwable e = error instanceof CompletionException && error.getCause() != null ? error.getCause() : error;
    if (e instanceof EntityStreamSizeException) {
      return new GrpcServiceException(Status.RESOURCE_EXHAUSTED.withDescription(
          "request: larger than " + MAX_REQUEST_BYTES + " bytes"));
    }
    if (e instanceof TimeoutException) {
      return new GrpcServiceException(Status.DEADLINE_EXCEEDED.withDescription(
          "request: did not arrive whole within " + COLLECT_MILLIS / 1000 + " s"));
    }
    return e;
  }

  /** A call's start: it parses its request, checks it and asks the tablets. */
  private interface Call {
    CompletionStage<? extends List<? extends MessageLite>> start() throws IOException;
  }

  /**
   * Starts {@code call}, here for a small request and on the dispatcher for a large one, so
   * one connection's big writes do not hold its thread while their messages are parsed.
   */
  private CompletionStage<? extends List<? extends MessageLite>> started(byte[] body, Call call) {
    if (body.length < PARSE_APART_BYTES) {
      return guarded(call);
    }
    return CompletableFuture.supplyAsync(() -> guarded(call), parsing).thenCompose(answer -> answer);
  }

  private static CompletionStage<? extends List<? extends MessageLite>> guarded(Call call) {
    try {
      return call.start();
    } catch (InvalidProtocolBufferException e) {
      return CompletableFuture.failedFuture(new GrpcServiceException(Status.INVALID_ARGUMENT.withDescription(
          "request: not a valid message: " + e.getMessage())));
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
  private static boolean oneMessage(byte[] body) {
    return body.length >= FRAME_HEADER && body[0] == 0
        && (ByteSink.getIntAt(body, 1) & 0xFFFFFFFFL) == body.length - FRAME_HEADER;
  }

  /** The message of a one-message body, read in place. */
  private static CodedInputStream message(byte[] body) {
    return CodedInputStream.newInstance(body, FRAME_HEADER, body.length - FRAME_HEADER);
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
    long total = 0;
    for (MessageLite m : messages) {
      total += FRAME_HEADER + m.getSerializedSize();
    }
    if (total > Integer.MAX_VALUE - 8) {
      throw new GrpcServiceException(Status.RESOURCE_EXHAUSTED.withDescription(
          "answer: " + total + " bytes is more than one response body can hold"));
    }
    byte[] body = new byte[(int) total];
    int at = 0;
    for (MessageLite m : messages) {
      int size = m.getSerializedSize();
      body[at] = 0;
      ByteSink.putIntAt(body, at + 1, size);
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
