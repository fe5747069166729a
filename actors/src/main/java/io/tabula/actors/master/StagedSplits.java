package io.tabula.actors.master;

import io.tabula.actors.Stages;
import io.tabula.persistence.schema.GcPolicy;
import io.tabula.protocol.errors.ErrorCode;
import io.tabula.protocol.errors.Refusal;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.apache.pekko.Done;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.AskPattern;

/**
 * A table's initial splits, when they are too many for one message to the master: the node
 * that took the {@code CreateTable} sends them in pieces of at most {@link #PIECE_BYTES}
 * ({@link Master.StageSplits}), then asks for the table with {@link Master.CreateStagedTable}.
 * A message between nodes must fit Artery's frame (1 MiB by default); 100,000 split keys of a
 * dozen bytes do not. The pieces are held by the master in memory only: a master that changes
 * during an upload answers UNAVAILABLE and the caller retries.
 *
 * <p>The master's side is owned by the master's actor: every method runs on its thread.
 */
public final class StagedSplits {
  /** Splits are sent in pieces of at most this many bytes (keys plus a few bytes each). */
  static final int PIECE_BYTES = 256 * 1024;
  /** All uploads under way hold at most this many bytes of keys on the master. */
  static final long MAX_HELD_BYTES = 64L * 1024 * 1024;
  /** An upload not finished in this time is dropped. */
  static final long UPLOAD_NANOS = 120_000_000_000L;

  private static final class Upload {
    final List<byte[]> splits = new ArrayList<>();
    long bytes;
    long lastNanos;
  }

  private final Map<String, Upload> uploads = new HashMap<>();
  private long heldBytes;

  /**
   * Creates {@code table} through {@code master}, staging its splits first when they do not
   * fit one message; completes with the table, or fails as the master's answer does.
   */
  public static CompletionStage<TableInfo> createTable(ActorRef<Master.Command> master, ActorSystem<?> system,
      Duration timeout, String table, Map<String, GcPolicy> families, List<byte[]> splits) {
    return createTable(master, system, timeout, table, families, Map.of(), splits);
  }

  /** {@link #createTable(ActorRef, ActorSystem, Duration, String, Map, List)} with aggregate families. */
  public static CompletionStage<TableInfo> createTable(ActorRef<Master.Command> master, ActorSystem<?> system,
      Duration timeout, String table, Map<String, GcPolicy> families,
      Map<String, io.tabula.persistence.schema.Aggregator> aggregates, List<byte[]> splits) {
    List<List<byte[]>> pieces = pieces(splits);
    if (pieces.size() <= 1) {
      return ask(master, system, timeout, r -> new Master.CreateTable(table, families, aggregates, splits, r));
    }
    String upload = UUID.randomUUID().toString();
    CompletableFuture<Done> staged = CompletableFuture.completedFuture(Done.getInstance());
    for (List<byte[]> piece : pieces) {
      staged = staged.thenCompose(x -> ask(master, system, timeout, r -> new Master.StageSplits(upload, piece, r)));
    }
    return staged.thenCompose(x -> ask(master, system, timeout,
        r -> new Master.CreateStagedTable(table, families, aggregates, upload, splits.size(), r)));
  }

  private static <T> CompletableFuture<T> ask(ActorRef<Master.Command> master, ActorSystem<?> system,
      Duration timeout, java.util.function.Function<ActorRef<org.apache.pekko.pattern.StatusReply<T>>,
      Master.Command> message) {
    return Stages.direct(AskPattern.askWithStatus(master, message::apply, timeout, system.scheduler()));
  }

  /** {@code splits} cut into pieces of at most {@link #PIECE_BYTES}, in order (one piece if they fit). */
  static List<List<byte[]>> pieces(List<byte[]> splits) {
    List<List<byte[]>> out = new ArrayList<>();
    List<byte[]> piece = new ArrayList<>();
    long bytes = 0;
    for (byte[] s : splits) {
      long cost = s.length + 8L;
      if (!piece.isEmpty() && bytes + cost > PIECE_BYTES) {
        out.add(piece);
        piece = new ArrayList<>();
        bytes = 0;
      }
      piece.add(s);
      bytes += cost;
    }
    out.add(piece);
    return out;
  }

  /** Adds a piece to upload {@code id}; a refusal if the master holds too much already. */
  Refusal stage(String id, List<byte[]> splits, long nowNanos) {
    long bytes = 0;
    for (byte[] s : splits) {
      bytes += s.length + 8L;
    }
    if (heldBytes + bytes > MAX_HELD_BYTES) {
      return Refusal.of(ErrorCode.RESOURCE_EXHAUSTED, "initial_splits: the master holds " + heldBytes / 1024
          + " KiB of other tables' initial splits being sent; retry later");
    }
    Upload u = uploads.computeIfAbsent(id, x -> new Upload());
    u.splits.addAll(splits);
    u.bytes += bytes;
    u.lastNanos = nowNanos;
    heldBytes += bytes;
    return null;
  }

  /** The splits of upload {@code id}, removed, if it holds exactly {@code count}; else null. */
  List<byte[]> take(String id, int count) {
    Upload u = uploads.remove(id);
    if (u == null) {
      return null;
    }
    heldBytes -= u.bytes;
    return u.splits.size() == count ? u.splits : null;
  }

  /** Drops the uploads nobody added to for {@link #UPLOAD_NANOS}. */
  void forgetOld(long nowNanos) {
    for (Iterator<Upload> it = uploads.values().iterator(); it.hasNext(); ) {
      Upload u = it.next();
      if (nowNanos - u.lastNanos > UPLOAD_NANOS) {
        heldBytes -= u.bytes;
        it.remove();
      }
    }
  }
}
