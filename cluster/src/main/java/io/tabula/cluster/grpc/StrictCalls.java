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
import com.google.iam.v1.TestIamPermissionsRequest;
import com.google.iam.v1.TestIamPermissionsResponse;
import io.tabula.cluster.security.Guard;
import io.tabula.cluster.security.ResourceFields;
import io.tabula.persistence.encoding.ByteSink;
import io.tabula.protocol.errors.ErrorCode;
import io.tabula.protocol.errors.Refusal;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
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
import org.apache.pekko.http.javadsl.model.AttributeKeys;
import org.apache.pekko.http.javadsl.model.HttpEntities;
import org.apache.pekko.http.javadsl.model.HttpEntity;
import org.apache.pekko.http.javadsl.model.HttpHeader;
import org.apache.pekko.http.javadsl.model.HttpRequest;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.http.javadsl.model.StatusCodes;
import org.apache.pekko.http.javadsl.model.Trailer;
import org.apache.pekko.http.javadsl.model.headers.RawHeader;
import org.apache.pekko.japi.function.Function;
import org.apache.pekko.util.ByteString;

/**
 * The front of every request whose method takes one message (all data, admin and locations
 * RPCs but the client-streaming session ones): it collects the request whole within the
 * method's byte limit ({@link UnaryInputs#maxBytes}) and 60 s, decompresses a gzip message
 * itself within the same limit ({@link Gunzip}; Pekko gRPC's own decompression has no
 * bound), and refuses a body that is not exactly one message (none, a truncated one, or
 * several: Pekko gRPC's unary unmarshalling fails with "Promise already completed" on a second
 * one) and a message that is not valid protobuf, naming the field ({@link MessageCheck}).
 *
 * <p>The busiest data calls (MutateRows, MutateRow, and ReadRows of a few row keys) are then
 * answered here without stream stages: this class reads the one gRPC message in place, and
 * the answer goes out as one strict body of gRPC messages followed by the status trailer. The
 * bytes on the wire are those of the generated handler's streamed answer; only the per-call
 * stream materialization on the way in and out is gone, which was a large share of a small
 * call's CPU. Every other checked request (other methods, a read that streams its rows,
 * gRPC-Web in binary) then goes to the generated handlers; gRPC-Web in base64 text is not
 * served (UNIMPLEMENTED); anything that is not gRPC goes to the generated handlers untouched.
 *
 * <p>Before any of that, every request passes the node's {@link Guard}: a call without
 * credentials the node accepts is UNAUTHENTICATED, one its caller may not make
 * PERMISSION_DENIED, before its body is read.
 */
final class StrictCalls {
  private static final String PREFIX = "/" + Bigtable.name + "/";
  private static final String READ_ROWS = PREFIX + "ReadRows";
  private static final String MUTATE_ROWS = PREFIX + "MutateRows";
  private static final String MUTATE_ROW = PREFIX + "MutateRow";
  /** Answered here, where the caller is known: on tables and views, and on the instance. */
  private static final java.util.Set<String> TEST_IAM_PERMISSIONS = java.util.Set.of(
      "/" + com.google.bigtable.admin.v2.BigtableTableAdmin.name + "/TestIamPermissions",
      "/" + com.google.bigtable.admin.v2.BigtableInstanceAdmin.name + "/TestIamPermissions");
  /** A request at least this large is parsed off the connection's thread. */
  private static final int PARSE_APART_BYTES = 16 * 1024;
  private static final int FRAME_HEADER = 5;
  /** How long a streamed request may take to arrive whole. */
  private static final long COLLECT_MILLIS = 60_000;
  private static final String ENCODING = "grpc-encoding";
  private static final String IDENTITY_ENCODING = "identity";
  private static final String GZIP_ENCODING = "gzip";
  private static final HttpHeader IDENTITY = RawHeader.create(ENCODING, IDENTITY_ENCODING);
  private static final HttpHeader OK_STATUS = RawHeader.create("grpc-status", "0");
  private static final Trailer OK = Trailer.create().addHeader(OK_STATUS);

  private final DataService data;
  private final ClassicActorSystemProvider system;
  private final Executor parsing;
  /** Where a backup's policy is read (storage I/O) to decide a call. */
  private final Executor blockingIo;
  private final Function<HttpRequest, CompletionStage<HttpResponse>> generated;
  private final Guard guard;

  /**
   * @param generated the generated handlers, for every request this class does not answer
   * @param guard who may call what: every request passes it before its body is read
   */
  StrictCalls(DataService data, ClassicActorSystemProvider system,
      Function<HttpRequest, CompletionStage<HttpResponse>> generated, Guard guard) {
    this.data = data;
    this.system = system;
    this.parsing = system.classicSystem().dispatcher();
    this.blockingIo = system.classicSystem().dispatchers().lookup(
        org.apache.pekko.dispatch.Dispatchers.DefaultBlockingDispatcherId());
    this.generated = generated;
    this.guard = guard;
  }

  /**
   * Answers {@code request}, here or through the generated handlers. A request of a method
   * that takes one message is collected whole and checked ({@link MessageCheck}) first, so a
   * malformed one is refused naming its field; the busiest calls are answered here.
   */
  CompletionStage<HttpResponse> handle(HttpRequest request) throws Exception {
    String path = request.getUri().path();
    if (!KnownMethods.has(path)) {
      // Only a method of the node's services, named exactly, reaches the handlers: the generated ones find a
      // method by the path's non-empty segments, so "/S/M/" or "/S//M" would reach M without the guard's check of M.
      request.discardEntityBytes(system);
      return CompletableFuture.completedFuture(notAMethod(request, path));
    }
    Guard.Admission admission = guard.admitCall(request, path);
    String encoding = request.getHeader(ENCODING).map(HttpHeader::value).orElse(IDENTITY_ENCODING);
    boolean known = encoding.equals(IDENTITY_ENCODING) || encoding.equals(GZIP_ENCODING);
    Framing framing = Framing.of(request.entity());
    boolean collected = UnaryInputs.has(path) && framing != Framing.OTHER && known;
    if (admission instanceof Guard.Admission.Admitted a && a.onResource() && !collected) {
      // A call whose resource this class cannot read: only the instance's policy decides, and it did not allow it.
      admission = guard.deniedOnInstance(a, path);
    }
    if (admission instanceof Guard.Admission.Refused refused) {
      // Before the body is read: a caller without credentials costs the node the headers' check.
      request.discardEntityBytes(system);
      return CompletableFuture.completedFuture(refusal(request, refused));
    }
    Guard.Admission.Admitted admitted = (Guard.Admission.Admitted) admission;
    if (!collected) {
      // Other encodings and content types: the generated handlers answer that they are not supported.
      return generated.apply(request);
    }
    Optional<GrpcProtocolWriter> negotiated = writerFor(request);
    if (negotiated.isEmpty()) {
      return generated.apply(request);
    }
    GrpcProtocolWriter writer = negotiated.get();
    if (framing == Framing.WEB_TEXT) {
      return CompletableFuture.completedFuture(errorResponse(GrpcErrors.unimplemented(
          "gRPC-Web in text (base64) encoding"), writer));
    }
    long limit = UnaryInputs.maxBytes(path);
    if (request.entity() instanceof HttpEntity.Strict strict) {
      return answer(request, strict.getData(), limit, writer, admitted);
    }
    // Collected within bounds: a client cannot make the node hold more than the method's limit of it, or for
    // longer than COLLECT_MILLIS.
    return BoundedBody.read(request.entity(), limit, Duration.ofMillis(COLLECT_MILLIS), system)
        .handle((whole, error) -> {
          if (error != null) {
            return CompletableFuture.completedFuture(errorResponse(collectionFailure(error), writer));
          }
          if (whole.bytes() == null) {
            return CompletableFuture.completedFuture(errorResponse(GrpcErrors.exhausted("request", "is "
                + whole.size() + " bytes, over the limit of " + limit + " for this method"), writer));
          }
          return answer(request.withEntity(HttpEntities.create(request.entity().getContentType(), whole.bytes())),
              whole.bytes(), limit, writer, admitted);
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

  /**
   * Answers a request whose body is all here, or hands it (whole) to the generated handlers;
   * never throws: whatever goes wrong ends as a gRPC status.
   */
  private CompletionStage<HttpResponse> answer(HttpRequest request, ByteString received, long limit,
      GrpcProtocolWriter writer, Guard.Admission.Admitted admitted) {
    try {
      if (request.getHeader(ENCODING).map(h -> h.value().equals(GZIP_ENCODING)).orElse(false)) {
        ByteString plain = Gunzip.frame(received, limit);
        request = request.removeHeader(ENCODING)
            .withEntity(HttpEntities.create(request.entity().getContentType(), plain));
        received = plain;
      }
      return answerOrThrow(request, received, writer, admitted);
    } catch (Exception e) {
      // Every failure, of whatever type, must end as a status here: the generated handlers are a
      // Pekko japi Function, whose apply declares Exception, and what they throw is theirs to name.
      return CompletableFuture.completedFuture(errorResponse(e, writer));
    }
  }

  private CompletionStage<HttpResponse> answerOrThrow(HttpRequest request, ByteString received,
      GrpcProtocolWriter writer, Guard.Admission.Admitted admitted) throws Exception {
    String path = request.getUri().path();
    byte[] body = received.toArrayUnsafe();
    if (!oneMessage(body)) {
      // Also keeps a second message away from Pekko gRPC's unary unmarshalling, which fails with "Promise already
      // completed" on one.
      return CompletableFuture.completedFuture(errorResponse(framingProblem(body), writer));
    }
    if (admitted.onResource()) {
      java.util.Map<String, String> fields = ResourceFields.of(UnaryInputs.of(path), body, FRAME_HEADER,
          body.length - FRAME_HEADER);
      if (guard.readsStorage(fields)) {
        // A backup's policy is read from storage: off the connection's thread.
        HttpRequest req = request;
        return CompletableFuture.supplyAsync(() -> guard.authorizeOn(admitted, path, fields), blockingIo)
            .thenCompose(denied -> denied.isPresent()
                ? CompletableFuture.completedFuture(refusal(req, denied.get()))
                : authorized(req, path, body, writer, admitted));
      }
      Optional<Guard.Admission.Refused> denied = guard.authorizeOn(admitted, path, fields);
      if (denied.isPresent()) {
        return CompletableFuture.completedFuture(refusal(request, denied.get()));
      }
    }
    return authorized(request, path, body, writer, admitted);
  }

  /** {@link #answerOrThrow} once the call is authorized; never throws (a failure ends as a status). */
  private CompletionStage<HttpResponse> authorized(HttpRequest request, String path, byte[] body,
      GrpcProtocolWriter writer, Guard.Admission.Admitted admitted) {
    try {
      return authorizedOrThrow(request, path, body, writer, admitted);
    } catch (Exception e) {
      // As in answer: the generated handlers are a Pekko japi Function, whose apply declares
      // Exception, and this also runs after a backup's policy was read off the connection's
      // thread, outside answer's own catch; every failure must still end as a status.
      return CompletableFuture.completedFuture(errorResponse(e, writer));
    }
  }

  private CompletionStage<HttpResponse> authorizedOrThrow(HttpRequest request, String path, byte[] body,
      GrpcProtocolWriter writer, Guard.Admission.Admitted admitted) throws Exception {
    if (TEST_IAM_PERMISSIONS.contains(path) && Framing.of(request.entity()) == Framing.NATIVE) {
      // Answered here, where the caller is known: which of the permissions it names the caller holds.
      TestIamPermissionsRequest in = TestIamPermissionsRequest.parseFrom(message(body));
      Supplier<HttpResponse> answer = () -> ok(List.of(TestIamPermissionsResponse.newBuilder().addAllPermissions(
          guard.held(admitted.principal(), in.getResource(), in.getPermissionsList())).build()), writer);
      if (guard.readsStorage(java.util.Map.of("resource", in.getResource()))) {
        return CompletableFuture.supplyAsync(answer, blockingIo).exceptionally(e -> errorResponse(
            GrpcErrors.from(e), writer));
      }
      return CompletableFuture.completedFuture(answer.get());
    }
    if (Framing.of(request.entity()) == Framing.WEB) {
      // gRPC-Web answers carry their trailers in the body: the generated handlers write those.
      return checkedOrGenerated(request, path, body, writer);
    }
    Call call;
    if (path.equals(READ_ROWS)) {
      ReadRowsRequest in;
      try {
        in = ReadRowsRequest.parseFrom(message(body));
      } catch (InvalidProtocolBufferException e) {
        return CompletableFuture.completedFuture(errorResponse(malformed(path, body, e), writer));
      }
      Optional<Supplier<CompletionStage<List<ReadRowsResponse>>>> whole = data.readRowsWhole(in, metadata(request));
      if (whole.isEmpty()) {
        return generated.apply(request);
      }
      call = () -> whole.get().get();
    } else if (!path.equals(MUTATE_ROWS) && !path.equals(MUTATE_ROW)) {
      return checkedOrGenerated(request, path, body, writer);
    } else if (path.equals(MUTATE_ROWS)) {
      Metadata metadata = metadata(request);
      call = () -> data.mutateRowsWhole(MutateRowsRequest.parseFrom(message(body)), metadata);
    } else {
      Metadata metadata = metadata(request);
      call = () -> data.mutateRow(MutateRowRequest.parseFrom(message(body)), metadata).thenApply(List::of);
    }
    return started(path, body, call).handle((messages, error) -> {
      if (error == null) {
        try {
          return ok(messages, writer);
        } catch (RuntimeException e) {
          return errorResponse(e, writer);
        }
      }
      return errorResponse(error, writer);
    });
  }

  /**
   * The answer to a path that names no method of the node's services: UNIMPLEMENTED for a gRPC
   * request (naming the service when the path is under one), 404 for anything else.
   */
  private HttpResponse notAMethod(HttpRequest request, String path) {
    Optional<GrpcProtocolWriter> writer = writerFor(request);
    if (writer.isEmpty()) {
      return HttpResponse.create().withStatus(StatusCodes.NOT_FOUND).withEntity(path + " is not a gRPC method of"
          + " this node's services");
    }
    String description = KnownMethods.unknownMethodOfKnownService(path) ? "method " + path.substring(
        path.lastIndexOf('/') + 1) + " is not a method of " + path.substring(1, path.lastIndexOf('/'))
        : "no service of this node has the method " + path;
    return errorResponse(new GrpcServiceException(Status.UNIMPLEMENTED.withDescription(description)), writer.get());
  }

  /** A refused call's answer: its status when the request is gRPC, else 401 or 403. */
  private HttpResponse refusal(HttpRequest request, Guard.Admission.Refused refused) {
    GrpcServiceException status = GrpcErrors.status(refused.code(), refused.message(), null);
    return writerFor(request).map(w -> errorResponse(status, w))
        .orElseGet(() -> HttpResponse.create().withStatus(refused.code() == ErrorCode.UNAUTHENTICATED
            ? StatusCodes.UNAUTHORIZED : StatusCodes.FORBIDDEN).withEntity(refused.message()));
  }

  /** The trailers-only answer for a failure, mapped by {@link GrpcErrors}. */
  private HttpResponse errorResponse(Throwable error, GrpcProtocolWriter writer) {
    return GrpcExceptionHandler.standard(error, GrpcErrors.handler(), writer, system);
  }

  /** The gRPC error for a request that could not be collected whole. */
  private static Throwable collectionFailure(Throwable error) {
    Throwable e = Refusal.unwrap(error);
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
  private CompletionStage<? extends List<? extends MessageLite>> started(String path, byte[] body, Call call) {
    if (body.length < PARSE_APART_BYTES) {
      return guarded(path, body, call);
    }
    return CompletableFuture.supplyAsync(() -> guarded(path, body, call), parsing).thenCompose(answer -> answer);
  }

  private static CompletionStage<? extends List<? extends MessageLite>> guarded(String path, byte[] body, Call call) {
    try {
      return call.start();
    } catch (InvalidProtocolBufferException e) {
      return CompletableFuture.failedFuture(malformed(path, body, e));
    } catch (IOException | RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
  }

  /**
   * INVALID_ARGUMENT for a message protobuf refused: naming the field {@link MessageCheck}
   * finds at fault, or with protobuf's own words when it finds none.
   */
  private static RuntimeException malformed(String path, byte[] body, InvalidProtocolBufferException e) {
    return MessageCheck.of(UnaryInputs.of(path), body, FRAME_HEADER, body.length - FRAME_HEADER)
        .<RuntimeException>map(p -> GrpcErrors.invalid(p.field(), p.problem()))
        .orElseGet(() -> GrpcErrors.malformed("request", e));
  }

  /** What is wrong with a body that is not exactly one uncompressed gRPC message. */
  private static RuntimeException framingProblem(byte[] body) {
    if (body.length == 0) {
      return GrpcErrors.invalid("request", "no message was sent; this method takes exactly one");
    }
    if (body.length < FRAME_HEADER) {
      return GrpcErrors.invalid("request", "ends inside the gRPC message header (" + body.length + " bytes)");
    }
    if (body[0] != 0) {
      return GrpcErrors.invalid("request", "is marked compressed without a grpc-encoding, or is not gRPC framing");
    }
    long declared = ByteSink.getIntAt(body, 1) & 0xFFFFFFFFL;
    return GrpcErrors.invalid("request", declared > body.length - FRAME_HEADER
        ? "declares a message of " + declared + " bytes but carries " + (body.length - FRAME_HEADER)
        : "carries more than the one message this method takes");
  }

  /** INVALID_ARGUMENT naming the field for a message {@link MessageCheck} finds wrong, else the generated handlers. */
  private CompletionStage<HttpResponse> checkedOrGenerated(HttpRequest request, String path, byte[] body,
      GrpcProtocolWriter writer) throws Exception {
    Optional<MessageCheck.Problem> problem = MessageCheck.of(UnaryInputs.of(path), body, FRAME_HEADER,
        body.length - FRAME_HEADER);
    if (problem.isPresent()) {
      return CompletableFuture.completedFuture(errorResponse(
          GrpcErrors.invalid(problem.get().field(), problem.get().problem()), writer));
    }
    return generated.apply(request);
  }

  /**
   * How a request body is framed: native gRPC (answered here or by the generated handlers),
   * gRPC-Web in binary (the same message framing; answered by the generated handlers, which
   * write its in-body trailers), gRPC-Web in base64 text (not served), or not gRPC.
   */
  private enum Framing {
    NATIVE, WEB, WEB_TEXT, OTHER;

    static Framing of(HttpEntity entity) {
      String subType = entity.getContentType().mediaType().subType();
      if (subType.equals("grpc") || subType.equals("grpc+proto")) {
        return NATIVE;
      }
      if (subType.equals("grpc-web") || subType.equals("grpc-web+proto")) {
        return WEB;
      }
      return subType.startsWith("grpc-web-text") ? WEB_TEXT : OTHER;
    }
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
      throw GrpcErrors.exhausted("answer", total + " bytes is more than one response body can hold");
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
