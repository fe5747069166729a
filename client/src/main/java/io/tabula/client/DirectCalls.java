package io.tabula.client;

import com.google.bigtable.v2.CheckAndMutateRowRequest;
import com.google.bigtable.v2.CheckAndMutateRowResponse;
import com.google.bigtable.v2.MutateRowRequest;
import com.google.bigtable.v2.MutateRowResponse;
import com.google.bigtable.v2.MutateRowsRequest;
import com.google.bigtable.v2.MutateRowsResponse;
import com.google.bigtable.v2.ReadModifyWriteRowRequest;
import com.google.bigtable.v2.ReadModifyWriteRowResponse;
import com.google.bigtable.v2.ReadRowsRequest;
import com.google.bigtable.v2.ReadRowsResponse;
import com.google.protobuf.Message;
import io.grpc.CallOptions;
import io.grpc.ClientCall;
import io.grpc.Channel;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import io.grpc.protobuf.ProtoUtils;
import io.tabula.protocol.errors.WireNames;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;

/**
 * The calls whose answers are gathered whole (unary calls, MutateRows, and ReadRows read into
 * memory) made on a grpc-java channel directly: one {@link ClientCall} and a listener per
 * call, where the Pekko gRPC client would materialize a stream (and an actor) for each.
 * Each call carries the attempt deadline, the channel's call credentials (a token) if it has
 * any, and, when given, the {@value WireNames#TABLET_HEADER}
 * header; a failed call completes with the {@code StatusRuntimeException} and its trailers,
 * so stale-route answers and the status details are read from them ({@link Failures}). Thread-safe.
 */
final class DirectCalls {
  private static final String SERVICE = "google.bigtable.v2.Bigtable";
  static final MethodDescriptor<MutateRowRequest, MutateRowResponse> MUTATE_ROW = method(
      MethodDescriptor.MethodType.UNARY, "MutateRow", MutateRowRequest.getDefaultInstance(),
      MutateRowResponse.getDefaultInstance());
  static final MethodDescriptor<CheckAndMutateRowRequest, CheckAndMutateRowResponse> CHECK_AND_MUTATE_ROW = method(
      MethodDescriptor.MethodType.UNARY, "CheckAndMutateRow", CheckAndMutateRowRequest.getDefaultInstance(),
      CheckAndMutateRowResponse.getDefaultInstance());
  static final MethodDescriptor<ReadModifyWriteRowRequest, ReadModifyWriteRowResponse> READ_MODIFY_WRITE_ROW =
      method(MethodDescriptor.MethodType.UNARY, "ReadModifyWriteRow", ReadModifyWriteRowRequest.getDefaultInstance(),
          ReadModifyWriteRowResponse.getDefaultInstance());
  static final MethodDescriptor<ReadRowsRequest, ReadRowsResponse> READ_ROWS = method(
      MethodDescriptor.MethodType.SERVER_STREAMING, "ReadRows", ReadRowsRequest.getDefaultInstance(),
      ReadRowsResponse.getDefaultInstance());
  static final MethodDescriptor<MutateRowsRequest, MutateRowsResponse> MUTATE_ROWS = method(
      MethodDescriptor.MethodType.SERVER_STREAMING, "MutateRows", MutateRowsRequest.getDefaultInstance(),
      MutateRowsResponse.getDefaultInstance());

  private static final Metadata.Key<String> TABLET = Metadata.Key.of(WireNames.TABLET_HEADER,
      Metadata.ASCII_STRING_MARSHALLER);

  private final Channel channel;
  private final Duration attemptTimeout;
  private final CallOptions options;
  private final Executor callbacks;

  /**
   * @param channel a channel whose listeners may run on its I/O thread (direct executor)
   * @param options what every call starts from (call credentials, or {@code CallOptions.DEFAULT})
   * @param callbacks where a finished call completes its future, so the caller's
   *     continuations never run on (or block) the channel's I/O thread
   */
  DirectCalls(Channel channel, Duration attemptTimeout, CallOptions options, Executor callbacks) {
    this.channel = channel;
    this.attemptTimeout = attemptTimeout;
    this.options = options;
    this.callbacks = callbacks;
  }

  /** The single answer of a unary call. */
  <Q, R> CompletableFuture<R> unary(MethodDescriptor<Q, R> method, Q request, String tablet) {
    return gather(method, request, tablet).thenApply(answers -> {
      if (answers.size() != 1) {
        throw new TabulaException(Status.Code.INTERNAL, method.getBareMethodName() + " answered "
            + answers.size() + " messages instead of one");
      }
      return answers.get(0);
    });
  }

  /** Every message the call answers with, once it has ended well. */
  <Q, R> CompletableFuture<List<R>> gather(MethodDescriptor<Q, R> method, Q request, String tablet) {
    CompletableFuture<List<R>> result = new CompletableFuture<>();
    ClientCall<Q, R> call = channel.newCall(method, options.withDeadlineAfter(attemptTimeout.toNanos(),
        TimeUnit.NANOSECONDS));
    Metadata headers = new Metadata();
    if (tablet != null) {
      headers.put(TABLET, tablet);
    }
    List<R> answers = new ArrayList<>(1);
    try {
      call.start(new ClientCall.Listener<R>() {
        @Override
        public void onMessage(R message) {
          answers.add(message);
          call.request(1);
        }

        @Override
        public void onClose(Status status, Metadata trailers) {
          Runnable complete = () -> {
            if (status.isOk()) {
              result.complete(answers);
            } else {
              result.completeExceptionally(status.asRuntimeException(trailers));
            }
          };
          try {
            callbacks.execute(complete);
          } catch (RejectedExecutionException e) {
            complete.run(); // the actor system is shutting down: answer here rather than never
          }
        }
      }, headers);
      call.request(1);
      call.sendMessage(request);
      call.halfClose();
    } catch (RuntimeException e) {
      call.cancel("the call could not be sent", e);
      result.completeExceptionally(e);
    }
    return result;
  }

  private static <Q extends Message, R extends Message> MethodDescriptor<Q, R> method(
      MethodDescriptor.MethodType type, String name, Q request, R response) {
    return MethodDescriptor.<Q, R>newBuilder().setType(type)
        .setFullMethodName(MethodDescriptor.generateFullMethodName(SERVICE, name))
        .setRequestMarshaller(ProtoUtils.marshaller(request)).setResponseMarshaller(ProtoUtils.marshaller(response))
        .build();
  }
}
