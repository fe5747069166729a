package io.tabula.actors.tablet;

import io.tabula.actors.Refusals;
import io.tabula.persistence.encoding.ByteArrays;
import io.tabula.persistence.model.Row;
import io.tabula.persistence.read.ReadFilter;
import io.tabula.persistence.tablet.Tablet;
import io.tabula.persistence.tablet.TabletUnavailableException;
import io.tabula.protocol.errors.Refusal;
import io.tabula.streams.filter.CompiledFilter;
import io.tabula.streams.filter.FilteredRow;
import io.tabula.streams.scan.TabletScans;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.function.Function;
import org.apache.pekko.NotUsed;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.pattern.StatusReply;
import org.apache.pekko.stream.javadsl.Source;
import org.apache.pekko.stream.javadsl.StreamRefs;

/**
 * Point reads and scans of one open tablet through a Bigtable filter. The engine's reads
 * are thread-safe (each works on a snapshot of the memtables and files), so these run on
 * whichever thread calls them: the tablet's actor hands them to the blocking-I/O
 * dispatcher, and the node's gRPC layer calls them directly for a tablet served on this
 * node ({@link LocalTablets}). A tablet closed by a split or a shutdown fails them with
 * {@link TabletUnavailableException}, which callers answer as moved.
 */
public final class TabletReads {
  private final String tabletId;
  private final Tablet tablet;
  private final FilterCache filters;
  /** What this tablet has read and written lately (point reads and scanned rows count here). */
  private final TabletLoad load;

  TabletReads(String tabletId, Tablet tablet, FilterCache filters, TabletLoad load) {
    this.tabletId = tabletId;
    this.tablet = tablet;
    this.filters = filters;
    this.load = load;
  }

  /** The tablet's load: its reads count here, its writes too ({@link TabletWrites}). */
  TabletLoad load() {
    return load;
  }

  /**
   * For the tablet's actor: compiles the filter on the caller's thread (a bad one is refused
   * at once), then runs {@code read} on {@code blockingIo} and replies with its result or its
   * failure.
   */
  <T> void offThread(byte[] filterBytes, ActorRef<StatusReply<T>> replyTo, Function<CompiledFilter, T> read,
      Executor blockingIo) {
    CompiledFilter filter;
    try {
      filter = compile(filterBytes);
    } catch (RuntimeException e) {
      replyTo.tell(Refusals.of(e).reply());
      return;
    }
    CompletableFuture.supplyAsync(() -> read.apply(filter), blockingIo).whenComplete((res, err) ->
        replyTo.tell(err == null ? StatusReply.success(res) : Refusals.of(err).reply()));
  }

  /** For the tablet's actor: answers {@code s} with a stream reference to the scan, or why not. */
  void openScan(TabletActor.OpenScan s, ActorSystem<?> system) {
    try {
      Source<FilteredRow, NotUsed> out = scan(s.start(), s.end(), s.filter(), s.reversed());
      s.replyTo().tell(StatusReply.success(out.runWith(StreamRefs.sourceRef(), system)));
    } catch (RuntimeException e) {
      s.replyTo().tell(Refusals.of(e).reply());
    }
  }

  /** The compiled form of a serialized filter; InvalidFilterException if it is not one. */
  CompiledFilter compile(byte[] filter) {
    return filters.compile(filter);
  }

  /**
   * The rows of {@code keys} (in the order given) that have cells passing {@code filter};
   * TabletUnavailableException if a key is outside the tablet or the tablet is closed.
   */
  public List<FilteredRow> rows(List<byte[]> keys, byte[] filter) {
    return rows(keys, compile(filter));
  }

  List<FilteredRow> rows(List<byte[]> keys, CompiledFilter filter) {
    List<FilteredRow> out = new ArrayList<>(keys.size());
    for (byte[] key : keys) {
      FilteredRow row = unchecked(key, filter);
      if (row != null) {
        out.add(row);
      }
    }
    tablet.checkNotFenced();
    return out;
  }

  /** One row through a filter, or null when no cell passes. */
  public FilteredRow row(byte[] key, byte[] filter) {
    return row(key, compile(filter));
  }

  FilteredRow row(byte[] key, CompiledFilter filter) {
    FilteredRow row = unchecked(key, filter);
    tablet.checkNotFenced();
    return row;
  }

  /** One row, read before the caller checks that the tablet is still served here ({@link Tablet#checkNotFenced}). */
  private FilteredRow unchecked(byte[] key, CompiledFilter filter) {
    if (!tablet.containsRow(key)) {
      throw new TabletUnavailableException("row " + ByteArrays.show(key) + " is not in tablet " + tabletId);
    }
    try {
      FilteredRow row = tablet.read(key, ReadFilter.all()).map(r -> passing(filter, r)).orElse(null);
      load.read(key, row == null ? 0 : row.approximateBytes());
      return row;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /**
   * The rows of {@code [start, end)} that have cells passing {@code filter}, back-pressured;
   * the snapshot is taken now, so TabletUnavailableException comes from this call, not
   * from the stream.
   */
  public Source<FilteredRow, NotUsed> scan(byte[] start, byte[] end, byte[] filter, boolean reversed) {
    return scan(start, end, compile(filter), reversed);
  }

  Source<FilteredRow, NotUsed> scan(byte[] start, byte[] end, CompiledFilter filter, boolean reversed) {
    Source<Row, NotUsed> rows = reversed ? TabletScans.rowsReversed(tablet, start, end, ReadFilter.all())
        : TabletScans.rows(tablet, start, end, ReadFilter.all());
    return rows.map(filter::apply).wireTap(x -> load.read(x.key(), x.cells().isEmpty() ? 0 : x.approximateBytes()))
        .filter(x -> !x.cells().isEmpty());
  }

  /** The row through the filter, or null when no cell passes. */
  private static FilteredRow passing(CompiledFilter filter, Row row) {
    FilteredRow x = filter.apply(row);
    return x.cells().isEmpty() ? null : x;
  }

  /**
   * The same rows as {@link #scan}, a few at a time (lists of up to 64 rows, never empty), so
   * a consumer that packs rows into responses need not handle them one by one.
   */
  public Source<List<FilteredRow>, NotUsed> scanInFews(byte[] start, byte[] end, byte[] filter, boolean reversed) {
    CompiledFilter f = compile(filter);
    if (reversed) {
      return scan(start, end, f, true).grouped(FEW);
    }
    return TabletScans.rowsInFews(tablet, start, end, ReadFilter.all()).map(rows -> {
      List<FilteredRow> out = new ArrayList<>(rows.size());
      for (Row r : rows) {
        FilteredRow x = passing(f, r);
        load.read(r.key(), x == null ? 0 : x.approximateBytes());
        if (x != null) {
          out.add(x);
        }
      }
      return out;
    }).filter(rows -> !rows.isEmpty());
  }

  private static final int FEW = 64;

  /**
   * What a failed read is answered with, as the tablet's actor would reply it: the refusal
   * an ask fails with (moved, invalid argument, unavailable, ...).
   */
  public static Refusal failure(Throwable readFailure) {
    return Refusals.of(readFailure);
  }
}
