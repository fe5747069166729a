package io.tabula.cluster.routing;

import io.tabula.actors.master.TabletInfo;
import io.tabula.actors.tablet.TabletActor;
import io.tabula.actors.tablet.TabletReads;
import io.tabula.persistence.encoding.ByteArrays;
import io.tabula.protocol.errors.ErrorCode;
import io.tabula.protocol.errors.Refusal;
import io.tabula.streams.filter.FilteredRow;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Function;
import org.apache.pekko.NotUsed;
import org.apache.pekko.japi.Pair;
import org.apache.pekko.stream.SourceRef;
import org.apache.pekko.stream.javadsl.Source;

/**
 * A scan of a row range over the tablets that hold it, one tablet after another, each part
 * read only once the one before has been: a tablet served here is read from its engine, any
 * other through its actor, which hands out a back-pressured stream reference (across nodes,
 * a StreamRef). Where the next tablet starts is decided from the tablet just read (its end
 * row, or start row backwards), so a split, merge or move under the scan neither skips nor
 * repeats a row. Failures are Tabula's typed refusals. Thread-safe.
 */
public final class Scans {
  private final Router router;

  public Scans(Router router) {
    this.router = router;
  }

  /**
   * The rows of {@code [start, end)} (an empty end is unbounded) with cells passing
   * {@code filter}, a few at a time (never empty lists), forwards or {@code reversed}.
   */
  public Source<List<FilteredRow>, NotUsed> range(String table, byte[] start, byte[] end, byte[] filter,
      boolean reversed) {
    long since = System.nanoTime();
    return reversed ? piecesBefore(table, start, end, filter, since) : piecesFrom(table, start, end, filter, since);
  }

  /**
   * The rows of [from, end) tablet by tablet: one part per tablet, the parts one after another
   * in a flat sequence (a chain of nested concatenations, one per tablet, made every row of a
   * table of 10,000 tablets pass 10,000 stages).
   */
  private Source<List<FilteredRow>, NotUsed> piecesFrom(String table, byte[] from, byte[] end, byte[] filter,
      long since) {
    return Source.unfoldAsync(java.util.Optional.of(from), next -> {
      if (next.isEmpty()) {
        return CompletableFuture.completedFuture(java.util.Optional.empty());
      }
      byte[] at = next.get();
      return tabletPart(TabletPosition.of(table, at), t -> at, t -> clipEnd(end, t.endRow()), filter, false,
          since)
          .thenApply(part -> {
            byte[] after = part.tablet().endRow();
            boolean more = after.length > 0 && (end.length == 0 || ByteArrays.compare(after, end) < 0);
            return java.util.Optional.of(Pair.create(more ? java.util.Optional.of(after)
                : java.util.Optional.<byte[]>empty(), part.rows()));
          });
    }).flatMapConcat(rows -> rows);
  }

  /** The rows of [start, end) backwards, tablet by tablet from the end. */
  private Source<List<FilteredRow>, NotUsed> piecesBefore(String table, byte[] start, byte[] end, byte[] filter,
      long since) {
    return Source.unfoldAsync(java.util.Optional.of(end), next -> {
      if (next.isEmpty()) {
        return CompletableFuture.completedFuture(java.util.Optional.empty());
      }
      byte[] before = next.get();
      return tabletPart(new TabletPosition(table, before, true),
          t -> ByteArrays.compare(start, t.startRow()) > 0 ? start : t.startRow(), t -> before, filter, true, since)
          .thenApply(part -> {
            byte[] prev = part.tablet().startRow();
            boolean more = prev.length > 0 && ByteArrays.compare(prev, start) > 0;
            return java.util.Optional.of(Pair.create(more ? java.util.Optional.of(prev)
                : java.util.Optional.<byte[]>empty(), part.rows()));
          });
    }).flatMapConcat(rows -> rows);
  }

  /** One tablet's part of a scan: the tablet as read (where the next part starts from) and its rows. */
  private record Part(TabletInfo tablet, Source<List<FilteredRow>, NotUsed> rows) {}

  /**
   * One tablet's part of a scan. A tablet this node serves is read here, from the engine (the
   * snapshot is taken now: the part is made when the scan comes to it); any other, or one that
   * has just split, through its actor, which hands out a stream reference; one never opened
   * ({@link UnopenedTablets}, for a scan that began at {@code since}) is passed by, empty.
   */
  private CompletionStage<Part> tabletPart(TabletPosition at, Function<TabletInfo, byte[]> startIn,
      Function<TabletInfo, byte[]> endIn, byte[] filter, boolean reversed, long since) {
    // cached, or looked up first, so that a tablet never opened is passed by here too; no tablet
    // there yet (a table being made) goes the actor's way, which retries that
    return router.locations().locate(at).handle((t, err) -> err == null
        ? tabletPart(at, t, startIn, endIn, filter, reversed, since)
        : Refusal.is(err, ErrorCode.MOVED) ? viaActor(at, startIn, endIn, filter, reversed)
        : CompletableFuture.<Part>failedFuture(err)).thenCompose(x -> x);
  }

  private CompletionStage<Part> tabletPart(TabletPosition at, TabletInfo t,
      Function<TabletInfo, byte[]> startIn, Function<TabletInfo, byte[]> endIn, byte[] filter, boolean reversed,
      long since) {
    TabletReads reads = router.localReads(t.id());
    if (reads != null) {
      try {
        return CompletableFuture.completedFuture(new Part(t, reads.scanInFews(startIn.apply(t), endIn.apply(t),
            filter, reversed)));
      } catch (RuntimeException e) {
        Refusal refusal = TabletReads.failure(e);
        if (refusal.code() != ErrorCode.MOVED) {
          return CompletableFuture.failedFuture(refusal.exception());
        }
        router.locations().forget(t);
        return viaActor(at, startIn, endIn, filter, reversed);
      }
    }
    return router.unopened().holdsNothing(t).thenCompose(none -> none
        ? CompletableFuture.completedFuture(new Part(t, Source.empty()))
        : viaActor(at, startIn, endIn, filter, reversed));
  }

  /** One tablet's part of a scan, read through its actor, which hands out a stream reference. */
  private CompletionStage<Part> viaActor(TabletPosition at, Function<TabletInfo, byte[]> startIn,
      Function<TabletInfo, byte[]> endIn, byte[] filter, boolean reversed) {
    return router.<SourceRef<FilteredRow>>ask(at,
        (ti, replyTo) -> new TabletActor.OpenScan(startIn.apply(ti), endIn.apply(ti), filter, reversed, replyTo))
        .thenApply(a -> new Part(a.tablet(), a.value().getSource().map(List::of)));
  }

  private static byte[] clipEnd(byte[] end, byte[] tabletEnd) {
    if (tabletEnd.length == 0) {
      return end;
    }
    if (end.length == 0) {
      return tabletEnd;
    }
    return ByteArrays.compare(end, tabletEnd) < 0 ? end : tabletEnd;
  }
}
