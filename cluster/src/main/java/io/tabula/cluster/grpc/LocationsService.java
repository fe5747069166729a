package io.tabula.cluster.grpc;

import com.google.protobuf.ByteString;
import io.tabula.actors.master.TabletInfo;
import io.tabula.actors.master.TabletLookup;
import io.tabula.cluster.routing.Router;
import io.tabula.protocol.errors.ErrorCode;
import io.tabula.protocol.locations.LocateRequest;
import io.tabula.protocol.locations.LocateResponse;
import io.tabula.protocol.locations.Locations;
import io.tabula.protocol.locations.TabletLocation;
import java.util.List;
import java.util.concurrent.CompletionStage;

/**
 * Tabula's {@code tabula.v1.Locations} service (paper §5.1): which tablet holds a row and the
 * tablets after it, looked up from the master's directory ({@code TabletLocations#fresh}),
 * and the endpoint serving each, from this node's copy of the directory. A client caches the answer, names the tablet in the
 * {@value RouteCheck#TABLET_HEADER} header of its single-row requests, and asks again when
 * one is refused as a stale route ({@link RouteCheck}).
 *
 * <p>Each tablet's endpoint is its owner's gRPC {@code host:port} ({@link Owners}); a tablet
 * with no owner that is Up is given this node's, which forwards. Thread-safe.
 */
final class LocationsService implements Locations {
  /** The most tablets after the located one a request may ask for. */
  static final int MAX_PREFETCH = 100;

  private final Router router;
  private final Owners owners;

  LocationsService(Router router, Owners owners) {
    this.router = router;
    this.owners = owners;
  }

  @Override
  public CompletionStage<LocateResponse> locate(LocateRequest in) {
    return GrpcErrors.unary(() -> {
      String table = Names.tableId("table_name", in.getTableName());
      int prefetch = in.getPrefetch();
      if (prefetch < 0 || prefetch > MAX_PREFETCH) {
        throw GrpcErrors.invalid("prefetch", "must be 0 to " + MAX_PREFETCH + ", was " + prefetch);
      }
      byte[] row = in.getRowKey().toByteArray();
      return router.locations().fresh(table, row, prefetch + 1)
          .thenApply(located -> answer(located, row));
    });
  }

  private LocateResponse answer(TabletLookup.Located located, byte[] row) {
    List<TabletInfo> tablets = located.tablets();
    if (tablets.isEmpty() || !tablets.get(0).containsRow(row)) {
      throw GrpcErrors.status(ErrorCode.UNAVAILABLE, "no tablet of the table holds the row yet: retry", null);
    }
    LocateResponse.Builder b = LocateResponse.newBuilder().setDirectoryVersion(located.version());
    for (int i = 0; i < tablets.size(); i++) {
      TabletInfo t = tablets.get(i);
      b.addTablets(TabletLocation.newBuilder().setTabletId(t.id()).setStartKey(ByteString.copyFrom(t.startRow()))
          .setEndKey(ByteString.copyFrom(t.endRow())).setEndpoint(owners.endpointOf(located.owners().get(i))));
    }
    return b.build();
  }
}
