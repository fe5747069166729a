package io.tabula.cluster.grpc;

import io.tabula.cluster.routing.Router;
import io.tabula.cluster.routing.TabletPosition;
import io.tabula.protocol.errors.ErrorCode;
import io.tabula.protocol.errors.WireNames;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.apache.pekko.grpc.GrpcServiceException;
import org.apache.pekko.grpc.javadsl.Metadata;

/**
 * Checks the tablet a client says a single-row request is for (paper §5.1: a client caches
 * tablet locations and learns that one is stale only when it is used). A client that
 * located the row through the {@code Locations} service names the tablet in the request
 * header {@value #TABLET_HEADER}; if the tablet this node has cached for the row
 * ({@code TabletLocations}) is another, and the master's directory, asked then, has no tablet
 * of the table with that id holding the row (it was split or merged), the request fails
 * before anything is applied with FAILED_PRECONDITION, the {@link ErrorCode#STALE_ROUTE} reason in its details and the trailer
 * {@value WireNames#STALE_ROUTE_TRAILER} {@code = 1}, so the client locates the row again.
 *
 * <p>A tablet this node's directory places on another Up node is a stale route too: the
 * client asks this node's Locations service again and is told the owner's endpoint, rather
 * than every request taking a forwarding hop.
 *
 * <p>A request without the header is not checked: the official Cloud Bigtable clients never
 * send it. An unknown table is NOT_FOUND, as it is without the header. The check is made
 * before the request is routed; a split that happens after it is handled as for any
 * request, by routing to the tablet now holding the row. Thread-safe.
 */
final class RouteCheck {
  /** Request header: the id of the tablet the client believes holds the request's row. */
  static final String TABLET_HEADER = WireNames.TABLET_HEADER;

  private static final CompletionStage<Void> PASS = CompletableFuture.completedStage(null);
  /** How long an owner the cache learned is taken as it is before a client is sent to it. */
  static final java.time.Duration OWNER_TRUSTED = java.time.Duration.ofSeconds(2);

  private final Router router;
  private final Owners owners;

  RouteCheck(Router router, Owners owners) {
    this.router = router;
    this.owners = owners;
  }

  /**
   * Completes when the request may go on: it names no tablet, or the tablet it names holds
   * {@code row}. Fails with the stale-route answer otherwise, or NOT_FOUND for an unknown table.
   */
  CompletionStage<Void> check(Metadata metadata, String table, byte[] row) {
    Optional<String> named = metadata.getText(TABLET_HEADER);
    if (named.isEmpty()) {
      return PASS;
    }
    String id = named.get();
    // the node's cached tablet for the row (one lookup shared by the requests that miss meanwhile);
    // the master is asked again only when that is not the tablet named, or the cache says another
    // node serves it and learned so more than OWNER_TRUSTED ago (a stale owner would send the client astray)
    return router.locations().locate(TabletPosition.of(table, row)).thenCompose(here -> {
      if (here.id().equals(id)) {
        String other = owners.otherOwner(router.locations().ownerOf(here));
        if (other == null) {
          return PASS;
        }
        if (router.locations().ownerKnownWithin(here, OWNER_TRUSTED)) {
          return CompletableFuture.failedStage(movedTo(table, id, other));
        }
      }
      return router.locations().fresh(table, row, 1).thenApply(a -> {
        if (a.tablets().isEmpty() || !a.tablets().get(0).id().equals(id) || !a.tablets().get(0).containsRow(row)) {
          throw stale(table, id);
        }
        String owner = owners.otherOwner(a.owners().get(0));
        if (owner != null) {
          throw movedTo(table, id, owner);
        }
        return null;
      });
    });
  }

  private static GrpcServiceException movedTo(String table, String id, String endpoint) {
    return GrpcErrors.status(ErrorCode.STALE_ROUTE, "stale route: tablet '" + id + "' of table " + table
        + " is served by " + endpoint + "; locate the row again", null);
  }

  private static GrpcServiceException stale(String table, String id) {
    return GrpcErrors.status(ErrorCode.STALE_ROUTE, "stale route: tablet '" + id + "' of table " + table
        + " does not hold the row (it was split, moved or never existed); locate the row again", null);
  }
}
