/**
 * Where a request goes: from a row, through this node's copy of the master's directory, to
 * the tablet that holds it and the node that serves that tablet. {@link
 * io.tabula.cluster.routing.Router} asks one tablet and follows a moved answer (a split, a
 * merge, a move) after refreshing the directory; {@link
 * io.tabula.cluster.routing.TabletBatches} groups the rows of one request by tablet and by
 * node, so a request costs one message per node it touches; {@link
 * io.tabula.cluster.routing.Scans} reads a row range tablet after tablet, back-pressured
 * across nodes; {@link io.tabula.cluster.routing.NodePeers} knows each other node's request
 * gateway.
 *
 * <p>Nothing here knows gRPC: failures are Tabula's typed refusals, which the gRPC layer
 * ({@code io.tabula.cluster.grpc}) turns into statuses.
 */
package io.tabula.cluster.routing;
