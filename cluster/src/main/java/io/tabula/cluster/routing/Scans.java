package io.tabula.cluster.routing;

import io.tabula.actors.master.Directory;
import io.tabula.actors.master.TabletInfo;
import io.tabula.actors.tablet.TabletActor;
import io.tabula.actors.tablet.TabletReads;
import io.tabula.persistence.encoding.ByteArrays;
import io.tabula.protocol.errors.ErrorCode;
import io.tabula.protocol.errors.Refusal;
import io.tabula.streams.filter.FilteredRow;
import java.util.List;
import java.util.function.Function;
import org.apache.pekko.NotUsed;
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
    return reversed ? piecesBefore(table, start, end, filter) : piecesFrom(table, start, end, filter);
  }

  /** The rows of [from, end) tablet by tablet: each tablet's part, then lazily the rest. */
  private Source<List<FilteredRow>, NotUsed> piecesFrom(String table, byte[] from, byte[] end, byte[] filter) {
    return tabletPart(table, d -> d.locate(table, from), t -> from, t -> clipEnd(end, t.endRow()), filter, false,
        t -> {
          byte[] next = t.endRow();
          boolean more = next.length > 0 && (end.length == 0 || ByteArrays.compare(next, end) < 0);
          return more ? Source.lazySource(() -> piecesFrom(table, next, end, filter))
              .mapMaterializedValue(m -> NotUsed.getInstance()) : Source.empty();
        });
  }

  /** The rows of [start, end) backwards, tablet by tablet from the end. */
  private Source<List<FilteredRow>, NotUsed> piecesBefore(String table, byte[] start, byte[] end, byte[] filter) {
    return tabletPart(table, d -> d.locateBefore(table, end),
        t -> ByteArrays.compare(start, t.startRow()) > 0 ? start : t.startRow(), t -> end, filter, true, t -> {
          byte[] prev = t.startRow();
          boolean more = prev.length > 0 && ByteArrays.compare(prev, start) > 0;
          return more ? Source.lazySource(() -> piecesBefore(table, start, prev, filter))
              .mapMaterializedValue(m -> NotUsed.getInstance()) : Source.empty();
        });
  }

  /**
   * One tablet's part of a scan, then {@code rest} of the tablet it came from. A tablet this
   * node serves is read here, from the engine (the snapshot is taken now: call this only
   * where the source is run at once); any other, or one that has just split, through its
   * actor, which hands out a stream reference.
   */
  private Source<List<FilteredRow>, NotUsed> tabletPart(String table, Function<Directory, TabletInfo> locate,
      Function<TabletInfo, byte[]> startIn, Function<TabletInfo, byte[]> endIn, byte[] filter, boolean reversed,
      Function<TabletInfo, Source<List<FilteredRow>, NotUsed>> rest) {
    TabletInfo t = locate.apply(router.directory());
    TabletReads reads = t == null ? null : router.localReads(t.id());
    if (reads != null) {
      try {
        return reads.scanInFews(startIn.apply(t), endIn.apply(t), filter, reversed).concat(rest.apply(t));
      } catch (RuntimeException e) {
        Refusal refusal = TabletReads.failure(e);
        if (refusal.code() != ErrorCode.MOVED) {
          return Source.failed(refusal.exception());
        }
      }
    }
    return Source.completionStage(router.<SourceRef<FilteredRow>>ask(table, locate,
        (ti, replyTo) -> new TabletActor.OpenScan(startIn.apply(ti), endIn.apply(ti), filter, reversed, replyTo)))
        .flatMapConcat(a -> a.value().getSource().map(List::of).concat(rest.apply(a.tablet())));
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
