package io.tabula.cluster.grpc;

import java.time.Duration;
import java.util.concurrent.CompletionStage;
import org.apache.pekko.actor.ClassicActorSystemProvider;
import org.apache.pekko.http.javadsl.model.HttpEntity;
import org.apache.pekko.stream.javadsl.Sink;
import org.apache.pekko.util.ByteString;
import org.apache.pekko.util.ByteStringBuilder;

/**
 * A request body read whole, but never kept past a limit: once it is larger, the rest is read
 * and dropped, so the client gets the node's RESOURCE_EXHAUSTED answer after it has sent its
 * request (answering while it still sends resets the stream, and the client sees CANCELLED
 * instead). The time a body may take is bounded too; a client that keeps sending past it is
 * cut off. Holds at most {@code limit} bytes per request.
 */
final class BoundedBody {
  /** The bytes, or null when there were more than the limit ({@code size} says how many were read). */
  record Collected(ByteString bytes, long size) {}

  private BoundedBody() {}

  static CompletionStage<Collected> read(HttpEntity entity, long limit, Duration within,
      ClassicActorSystemProvider system) {
    return entity.withoutSizeLimit().getDataBytes()
        .completionTimeout(within)
        .runWith(Sink.fold(new Builder(limit), Builder::add), system)
        .thenApply(Builder::collected);
  }

  /** Owned by the stream that folds into it. */
  private static final class Builder {
    private final long limit;
    private ByteStringBuilder bytes = new ByteStringBuilder();
    private long size;

    Builder(long limit) {
      this.limit = limit;
    }

    Builder add(ByteString chunk) {
      size += chunk.size();
      if (bytes != null && size > limit) {
        bytes = null;
      } else if (bytes != null) {
        bytes.append(chunk);
      }
      return this;
    }

    Collected collected() {
      return new Collected(bytes == null ? null : bytes.result(), size);
    }
  }
}
