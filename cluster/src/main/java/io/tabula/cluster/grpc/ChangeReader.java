package io.tabula.cluster.grpc;

import com.google.bigtable.v2.ReadChangeStreamResponse;
import com.google.bigtable.v2.StreamContinuationToken;
import com.google.bigtable.v2.StreamPartition;
import io.tabula.actors.master.TabletInfo;
import io.tabula.actors.tablet.NodeRequests;
import io.tabula.actors.tablet.TabletActor;
import io.tabula.actors.tablet.TabletChangeReads;
import io.tabula.persistence.changes.Change;
import io.tabula.persistence.changes.ChangeLog;
import io.tabula.persistence.tablet.ChangeLineage;
import io.tabula.persistence.tablet.Tablet;
import io.tabula.protocol.errors.ErrorCode;
import io.tabula.protocol.errors.Refusal;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

/**
 * One {@code ReadChangeStream}'s reading of one tablet's changes (docs/change-streams.md), a
 * step at a time as the client takes them ({@link #next}; the stream asks for the next step
 * only once the last one's messages were taken, so a slow reader holds one step's bytes).
 *
 * <p>A served tablet is asked through its actor, on whatever node serves it, for the changes its
 * memtables hold after the reader's position; when that is not all of them, the rest is read
 * here from the tablet's change log on the storage. A reader that has caught up waits at the
 * tablet for the next write, at most until its next heartbeat is due. A tablet that no longer
 * answers (moving, or its node died) is asked again until its next owner serves it from the
 * same change log and commit log. A tablet that was split or merged ({@link ChangeLineage})
 * is read to its end from its change log, and the stream ends with a {@code CloseStream}
 * naming the tablets that took its rows.
 *
 * <p>Not thread-safe: the stream runs one step at a time, each after the last has completed.
 */
final class ChangeReader {
  /** Most bytes of changes one step reads: half the cluster transport's frame, as a read's answer. */
  static final long STEP_BYTES = NodeRequests.ANSWER_BYTES;
  /** The longest a tablet holds a caught-up reader's ask: well inside the ask's timeout. */
  static final long MAX_WAIT_MILLIS = 4000;
  /** How long a reader asks again for a tablet that does not answer before it gives up (UNAVAILABLE). */
  static final long UNAVAILABLE_FOR_NANOS = TimeUnit.SECONDS.toNanos(120);

  private final ChangeStreams streams;
  private final String table;
  private final StreamPartition partition;
  private final Collection<String> families;
  private final String tabletId;
  private final long startMicros;
  private final long endMicros;
  private final long heartbeatNanos;
  private long after;
  private ChangeLog.Cursor cursor;
  private long watermark;
  private long lastSentNanos;
  private long unavailableSince = -1;
  private List<ChangeLineage.Successor> successors;
  private boolean ended;
  /**
   * Whether a change at or after the start time has passed (commit times never fall along a
   * tablet's sequences, so none before it comes after): until then, a position would resume
   * before the start, and the tokens sent are the start time itself.
   */
  private boolean passedStart;

  /**
   * A reader of tablet {@code tabletId} after sequence {@code after}, sending the changes
   * committed from {@code startMicros} (0: all) up to {@code endMicros} (0: no end).
   */
  ChangeReader(ChangeStreams streams, String table, StreamPartition partition, Collection<String> families,
      String tabletId, long after, long startMicros, long endMicros, long heartbeatNanos) {
    this.streams = streams;
    this.table = table;
    this.partition = partition;
    this.families = families;
    this.tabletId = tabletId;
    this.after = after;
    this.startMicros = startMicros;
    this.endMicros = endMicros;
    this.heartbeatNanos = heartbeatNanos;
    this.watermark = startMicros;
    this.passedStart = startMicros == 0;
    this.lastSentNanos = System.nanoTime();
  }

  /** The next step's messages (possibly none), or empty once the stream has ended. */
  CompletionStage<Optional<List<ReadChangeStreamResponse>>> next() {
    if (ended) {
      return CompletableFuture.completedFuture(Optional.empty());
    }
    if (successors != null) {
      return fromLog().thenApply(changes -> Optional.of(changes.isEmpty() ? closed() : deliver(changes, false)));
    }
    long wait = Math.max(0, Math.min(MAX_WAIT_MILLIS,
        TimeUnit.NANOSECONDS.toMillis(lastSentNanos + heartbeatNanos - System.nanoTime())));
    return streams.router().<TabletChangeReads.ChangesRead>askTablet(tabletId,
        replyTo -> new TabletActor.ReadChanges(after, STEP_BYTES, wait, replyTo))
        .handle((mem, err) -> err == null ? fromTablet(mem) : unanswered(err))
        .thenCompose(x -> x);
  }

  private CompletionStage<Optional<List<ReadChangeStreamResponse>>> fromTablet(TabletChangeReads.ChangesRead mem) {
    unavailableSince = -1;
    if (mem.watermarkMicros() > watermark) {
      watermark = mem.watermarkMicros();
    }
    if (mem.complete()) {
      return CompletableFuture.completedFuture(Optional.of(deliver(mem.changes(), true)));
    }
    return fromLog().thenCompose(logged -> {
      if (!logged.isEmpty()) {
        return CompletableFuture.completedFuture(Optional.of(deliver(logged, false)));
      }
      if (!mem.changes().isEmpty()) {
        return CompletableFuture.completedFuture(Optional.of(deliver(mem.changes(), false)));
      }
      // A change too large to travel is being flushed to the log: look again shortly.
      return pause(50).thenApply(x -> Optional.of(heartbeatIfDue()));
    });
  }

  /** The changes after the position in the tablet's change log, read on the node's blocking threads. */
  private CompletionStage<List<Change>> fromLog() {
    return CompletableFuture.supplyAsync(() -> {
      try {
        ChangeLog.Batch b = ChangeLog.readAfter(streams.storage(), ChangeLog.folder(Tablet.dirOf(table, tabletId)),
            after, STEP_BYTES, cursor, startMicros);
        if (b.next() != null) {
          cursor = b.next();
        }
        return b.changes();
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }, streams.blockingIo());
  }

  /**
   * The messages for {@code changes}, which move the position; a heartbeat if none is sent and
   * one is due; the end if the end time is passed. {@code caughtUp}: nothing visible is left after them.
   */
  private List<ReadChangeStreamResponse> deliver(List<Change> changes, boolean caughtUp) {
    List<ReadChangeStreamResponse> out = new ArrayList<>();
    for (Change c : changes) {
      if (endMicros > 0 && c.commitMicros() >= endMicros) {
        ended = true;
        out.add(ChangeResponses.finished());
        return out;
      }
      after = c.lastSequence();
      watermark = Math.max(watermark, c.commitMicros());
      if (c.commitMicros() >= startMicros) {
        passedStart = true;
        out.addAll(ChangeResponses.dataChange(c, streams.clusterId(), ChangeToken.position(tabletId, after),
            c.commitMicros(), families));
      }
    }
    if (caughtUp && endMicros > 0 && watermark >= endMicros) {
      ended = true;
      out.add(ChangeResponses.finished());
      return out;
    }
    if (out.isEmpty()) {
      return heartbeatIfDue();
    }
    lastSentNanos = System.nanoTime();
    return out;
  }

  private List<ReadChangeStreamResponse> heartbeatIfDue() {
    if (System.nanoTime() - lastSentNanos < heartbeatNanos) {
      return List.of();
    }
    lastSentNanos = System.nanoTime();
    return List.of(ChangeResponses.heartbeat(partition, here(), watermark));
  }

  /** Where the reader stands, as a token: its position, or its start time while it has not passed it. */
  private ChangeToken here() {
    return passedStart ? ChangeToken.position(tabletId, after) : ChangeToken.time(startMicros);
  }

  /**
   * The tablet did not answer: moving (ask again, heartbeats going on), or retired by a split
   * or merge (read its log to the end, then close), or gone for longer than a move takes.
   */
  private CompletionStage<Optional<List<ReadChangeStreamResponse>>> unanswered(Throwable err) {
    if (!Refusal.is(err, ErrorCode.MOVED) && !Refusal.is(err, ErrorCode.UNAVAILABLE)
        && !(Refusal.unwrap(err) instanceof java.util.concurrent.TimeoutException)) {
      return CompletableFuture.failedFuture(err);
    }
    long now = System.nanoTime();
    if (unavailableSince < 0) {
      unavailableSince = now;
    } else if (now - unavailableSince > UNAVAILABLE_FOR_NANOS) {
      return CompletableFuture.failedFuture(Refusal.of(ErrorCode.UNAVAILABLE, "tablet " + tabletId
          + " has not answered for " + TimeUnit.NANOSECONDS.toSeconds(now - unavailableSince)
          + " s; resume from the last token").exception());
    }
    return streams.router().locations().every(table).thenCompose(tablets -> {
      Set<String> current = tablets.stream().map(TabletInfo::id).collect(Collectors.toSet());
      if (current.contains(tabletId)) {
        return pause(100).thenApply(x -> Optional.of(heartbeatIfDue()));
      }
      return CompletableFuture.supplyAsync(() -> {
        try {
          return ChangeLineage.successors(streams.storage(), table, tabletId, current::contains);
        } catch (IOException e) {
          throw new UncheckedIOException(e);
        }
      }, streams.blockingIo()).thenCompose(next -> {
        if (next == null) {
          return pause(100).thenApply(x -> Optional.of(heartbeatIfDue()));
        }
        successors = next;
        return CompletableFuture.completedFuture(Optional.of(List.<ReadChangeStreamResponse>of()));
      });
    });
  }

  /** The end of a retired tablet's stream: where its rows went, and a token for each from its start. */
  private List<ReadChangeStreamResponse> closed() {
    ended = true;
    List<StreamContinuationToken> tokens = new ArrayList<>();
    List<StreamPartition> next = new ArrayList<>();
    for (ChangeLineage.Successor s : successors) {
      StreamPartition p = ChangeResponses.partition(s.startRow(), s.endRow());
      // A split's token covers the child's part of this partition; a merge's, this partition in the child.
      StreamPartition covered = successors.size() > 1 ? p : partition;
      tokens.add(ChangeResponses.token(covered, passedStart ? ChangeToken.position(s.tabletId(), s.startsAfter())
          : ChangeToken.time(startMicros)));
      next.add(p);
    }
    return List.of(ChangeResponses.moved("tablet " + tabletId + " was " + (successors.size() > 1 ? "split" : "merged")
        + "; read on from the new partitions", tokens, next));
  }

  private static CompletionStage<Void> pause(long millis) {
    return CompletableFuture.runAsync(() -> { }, CompletableFuture.delayedExecutor(millis, TimeUnit.MILLISECONDS));
  }
}
