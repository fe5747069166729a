package io.tabula.protocol.errors;

/** The gRPC header and trailer names Tabula's nodes and clients agree on, in one place. */
public final class WireNames {
  private WireNames() {}

  /** Request header: the id of the tablet the client believes holds the request's row. */
  public static final String TABLET_HEADER = "tabula-tablet";

  /**
   * Trailer ({@code = "1"}) of a stale-route answer, beside the {@link ErrorCode#STALE_ROUTE}
   * reason in the status details; clients may rely on either.
   */
  public static final String STALE_ROUTE_TRAILER = "tabula-stale-route";

  /** gRPC's trailer for the rich error model: a serialized {@code google.rpc.Status}. */
  public static final String STATUS_DETAILS_TRAILER = "grpc-status-details-bin";
}
