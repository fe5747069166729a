package io.tabula.client;

import com.google.protobuf.ByteString;
import io.grpc.Status;
import io.tabula.protocol.locations.LocateRequest;
import io.tabula.protocol.locations.LocateResponse;
import io.tabula.protocol.locations.TabletLocation;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.function.Function;

/**
 * Which node serves which row range of each table (paper §5.1): filled from the Locations
 * service of a seed node, a lookup bringing the row's tablet and the next
 * {@code prefetch} ones, and emptied where a node answers that a route is stale or a node
 * cannot be reached. Against a server without the Locations service (the Cloud Bigtable
 * emulator, say) every row maps to the seed, with no tablet named. Thread-safe: the maps
 * are concurrent, and a lookup replaces the entries its answer overlaps.
 */
final class LocationCache {
  /** A tablet's row range [start, end) (an empty end is unbounded) and the node serving it; a null id names none. */
  record Location(String tabletId, ByteString start, ByteString end, String endpoint) {
    boolean contains(ByteString row) {
      return Bytes.compare(row, start) >= 0 && (end.isEmpty() || Bytes.compare(row, end) < 0);
    }
  }

  private final String seed;
  private final Function<String, Endpoint> endpoints;
  private final int prefetch;
  private final Map<String, ConcurrentSkipListMap<ByteString, Location>> tables = new ConcurrentHashMap<>();
  private final Map<String, CompletableFuture<Void>> lookups = new ConcurrentHashMap<>();
  private volatile boolean serviceMissing;
  /** Where every row is when the seed has no Locations service: the seed, naming no tablet. */
  private final Location seedOnly;

  LocationCache(String seed, Function<String, Endpoint> endpoints, int prefetch) {
    this.seed = seed;
    this.endpoints = endpoints;
    this.prefetch = prefetch;
    this.seedOnly = new Location(null, ByteString.EMPTY, ByteString.EMPTY, seed);
  }

  /** The cached location of {@code row}, or null. */
  Location cached(String tableName, ByteString row) {
    if (serviceMissing) {
      return seedOnly;
    }
    ConcurrentSkipListMap<ByteString, Location> t = tables.get(tableName);
    Map.Entry<ByteString, Location> e = t == null ? null : t.floorEntry(row);
    return e != null && e.getValue().contains(row) ? e.getValue() : null;
  }

  /** The location of {@code row}: cached, or asked of the seed (one lookup per table at a time). */
  CompletionStage<Location> locate(String tableName, ByteString row) {
    Location l = cached(tableName, row);
    if (l != null) {
      return CompletableFuture.completedFuture(l);
    }
    CompletableFuture<Void> mine = new CompletableFuture<>();
    CompletableFuture<Void> running = lookups.putIfAbsent(tableName, mine);
    if (running != null) {
      return running.thenCompose(x -> locate(tableName, row));
    }
    return lookUp(tableName, row).whenComplete((v, err) -> {
      lookups.remove(tableName, mine);
      if (err == null) {
        mine.complete(null);
      } else {
        mine.completeExceptionally(err);
      }
    }).thenApply(x -> {
      Location found = cached(tableName, row);
      if (found == null) {
        throw new TabulaException(Status.Code.UNAVAILABLE, "no tablet of " + tableName + " was found to hold row "
            + row.toStringUtf8());
      }
      return found;
    });
  }

  private CompletionStage<Void> lookUp(String tableName, ByteString row) {
    LocateRequest req = LocateRequest.newBuilder().setTableName(tableName).setRowKey(row).setPrefetch(prefetch).build();
    return endpoints.apply(seed).locations.locate(req).handle((resp, err) -> {
      if (err == null) {
        remember(tableName, resp);
        return null;
      }
      if (Failures.of(err).code() == Status.Code.UNIMPLEMENTED) {
        serviceMissing = true;
        return null;
      }
      throw Failures.of(err);
    });
  }

  private void remember(String tableName, LocateResponse resp) {
    ConcurrentSkipListMap<ByteString, Location> t = tables.computeIfAbsent(tableName,
        k -> new ConcurrentSkipListMap<>(ByteString.unsignedLexicographicalComparator()));
    for (TabletLocation tl : resp.getTabletsList()) {
      Location l = new Location(tl.getTabletId(), tl.getStartKey(), tl.getEndKey(), tl.getEndpoint());
      // Drop what the new range overlaps: the entry that starts before it and reaches into it, and those inside.
      Map.Entry<ByteString, Location> before = t.lowerEntry(l.start());
      if (before != null && (before.getValue().end().isEmpty() || Bytes.compare(before.getValue().end(), l.start()) > 0)) {
        t.remove(before.getKey(), before.getValue());
      }
      (l.end().isEmpty() ? t.tailMap(l.start(), true) : t.subMap(l.start(), true, l.end(), false)).clear();
      t.put(l.start(), l);
    }
  }

  /** Forgets where {@code row} is, after a node said the route was stale or could not be reached. */
  void invalidate(String tableName, ByteString row) {
    ConcurrentSkipListMap<ByteString, Location> t = tables.get(tableName);
    Map.Entry<ByteString, Location> e = t == null ? null : t.floorEntry(row);
    if (e != null && e.getValue().contains(row)) {
      t.remove(e.getKey(), e.getValue());
    }
  }

  /** Forgets every tablet of a table (deleted or recreated). */
  void invalidate(String tableName) {
    tables.remove(tableName);
  }
}
