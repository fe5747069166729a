package io.tabula.cluster.grpc;

import com.google.bigtable.admin.v2.BigtableInstanceAdminHandlerFactory;
import com.google.bigtable.admin.v2.BigtableTableAdminHandlerFactory;
import com.google.bigtable.v2.BigtablePowerApiHandlerFactory;
import io.tabula.actors.master.Master;
import io.tabula.cluster.NodeSettings;
import io.tabula.cluster.metrics.GrpcMetrics;
import io.tabula.cluster.routing.Router;
import io.tabula.cluster.security.NodeSecurity;
import io.tabula.protocol.groups.LocalityGroups;
import io.tabula.protocol.groups.LocalityGroupsHandlerFactory;
import io.tabula.protocol.locations.Locations;
import io.tabula.protocol.locations.LocationsHandlerFactory;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Supplier;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.grpc.javadsl.ServiceHandler;
import org.apache.pekko.http.javadsl.Http;
import org.apache.pekko.http.javadsl.ServerBinding;
import org.apache.pekko.http.javadsl.ServerBuilder;
import org.apache.pekko.http.javadsl.model.HttpRequest;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.japi.function.Function;
import org.apache.pekko.stream.Materializer;
import org.apache.pekko.stream.SystemMaterializer;

/**
 * Binds the Cloud Bigtable data, table-admin and instance-admin services and Tabula's own
 * Locations and LocalityGroups services on the node's gRPC port.
 */
public final class BigtableServices {
  private BigtableServices() {}

  /**
   * The request without the client's list of accepted response encodings, so responses go
   * out uncompressed. Clients offer gzip by default; cell values are mostly incompressible
   * (and a loopback or LAN link is not the bottleneck), so compressing cost a large share of
   * a scan's CPU on both ends for nothing.
   */
  private static HttpRequest uncompressed(HttpRequest request) {
    return request.removeHeader(ACCEPT_ENCODING);
  }

  private static final String ACCEPT_ENCODING = "grpc-accept-encoding";

  /** How many members of the cluster are Up now: the instance's one cluster's serve nodes. */
  private static int upMembers(org.apache.pekko.cluster.typed.Cluster cluster) {
    int up = 0;
    for (org.apache.pekko.cluster.Member m : cluster.state().getMembers()) {
      if (m.status() == org.apache.pekko.cluster.MemberStatus.up()) {
        up++;
      }
    }
    return up;
  }

  @SuppressWarnings("unchecked")
  public static CompletionStage<ServerBinding> bind(ActorSystem<?> system, NodeSettings settings,
      NodeSecurity security, Router router,
      ActorRef<Master.Command> master,
      java.util.function.Function<String, CompletionStage<Void>> onTableDeleted, GrpcMetrics metrics,
      io.tabula.persistence.storage.Storage storage) {
    // metrics: what times the calls, or null (metrics off)
    // With port 0 the port is known only once bound. No request arrives before that; join() waits out the
    // moment between the bind and this stage's completion.
    CompletableFuture<ServerBinding> bound = new CompletableFuture<>();
    Supplier<String> endpoint = () -> settings.host() + ":" + bound.join().localAddress().getPort();
    Owners owners = new Owners(org.apache.pekko.cluster.typed.Cluster.get(system), settings.name(), endpoint);
    com.typesafe.config.Config config = system.settings().config();
    java.util.concurrent.Executor blocking = system.dispatchers().lookup(
        org.apache.pekko.actor.typed.DispatcherSelector.blocking());
    DataService dataService = new DataService(router, owners, new ChangeStreams(router, storage, blocking,
        config.getString("tabula.instance.cluster-id"), () -> System.currentTimeMillis() * 1000));
    // Every failure, also of a request that does not parse, is answered through GrpcErrors.
    Materializer mat = SystemMaterializer.get(system).materializer();
    Function<HttpRequest, CompletionStage<HttpResponse>> data = BigtablePowerApiHandlerFactory.partial(
        dataService, com.google.bigtable.v2.Bigtable.name, mat, GrpcErrors.handler(), system);
    BackupService backups = new BackupService(router, storage, config.getString("tabula.instance.cluster-id"),
        system.dispatchers().lookup(org.apache.pekko.actor.typed.DispatcherSelector.blocking()),
        () -> System.currentTimeMillis() * 1000, config.getDuration("tabula.master.sweep-files-grace").dividedBy(4),
        CopySources.from(config));
    AdminService adminService = new AdminService(system, master, router, settings.askTimeout(), onTableDeleted,
        backups);
    Function<HttpRequest, CompletionStage<HttpResponse>> admin = BigtableTableAdminHandlerFactory.partial(adminService,
        com.google.bigtable.admin.v2.BigtableTableAdmin.name, mat, GrpcErrors.handler(), system);
    Function<HttpRequest, CompletionStage<HttpResponse>> locations = LocationsHandlerFactory.partial(
        new LocationsService(router, owners), Locations.name, mat, GrpcErrors.handler(), system);
    Function<HttpRequest, CompletionStage<HttpResponse>> groups = LocalityGroupsHandlerFactory.partial(
        new LocalityGroupsService(adminService, router), LocalityGroups.name, mat, GrpcErrors.handler(), system);
    org.apache.pekko.cluster.typed.Cluster cluster = org.apache.pekko.cluster.typed.Cluster.get(system);
    InstanceAdminService instanceService = new InstanceAdminService(config.getConfig("tabula.instance"), () -> upMembers(cluster), security.guard()::instancePolicy);
    Function<HttpRequest, CompletionStage<HttpResponse>> instances = BigtableInstanceAdminHandlerFactory.partial(
        instanceService, com.google.bigtable.admin.v2.BigtableInstanceAdmin.name, mat, GrpcErrors.handler(), system);
    Function<HttpRequest, CompletionStage<HttpResponse>> operations = com.google.longrunning.OperationsHandlerFactory
        .partial(new OperationsService(backups, router, storage, system.dispatchers().lookup(
            org.apache.pekko.actor.typed.DispatcherSelector.blocking())), com.google.longrunning.Operations.name, mat,
            GrpcErrors.handler(), system);
    Function<HttpRequest, CompletionStage<HttpResponse>> services = ServiceHandler.concatOrNotFound(data, admin,
        instances, operations, locations, groups);
    // The policies of tables and views, from this node's copy of the directory (every node holds every table).
    // Backups' policies, from the storage root (BackupPolicies).
    StrictCalls strict = new StrictCalls(dataService, system, services, security.guard().withTables(table -> {
      io.tabula.actors.master.TableInfo t = router.directory().table(table);
      return t == null ? null : t.access();
    }).withBackups(id -> BackupPolicies.bindings(storage, id)));
    Function<HttpRequest, CompletionStage<HttpResponse>> front = request -> strict.handle(uncompressed(request));
    if (metrics != null) {
      front = metrics.timed(front);
    }
    ServerBuilder server = Http.get(system).newServerAt(settings.host(), settings.grpcPort());
    if (security.serverTls().isPresent()) {
      // HTTP/2 negotiated by ALPN; a rotated certificate serves new connections (ServerTls).
      server = server.enableHttps(security.serverTls().get().connectionContext());
    }
    CompletionStage<ServerBinding> binding = server.bind(front);
    return binding.whenComplete((b, err) -> {
      if (err == null) {
        bound.complete(b);
      } else {
        bound.completeExceptionally(err);
      }
    });
  }
}
