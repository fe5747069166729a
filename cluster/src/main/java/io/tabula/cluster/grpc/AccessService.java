package io.tabula.cluster.grpc;

import com.google.bigtable.admin.v2.AuthorizedView;
import com.google.bigtable.admin.v2.CreateAuthorizedViewMetadata;
import com.google.bigtable.admin.v2.CreateAuthorizedViewRequest;
import com.google.bigtable.admin.v2.DeleteAuthorizedViewRequest;
import com.google.bigtable.admin.v2.GetAuthorizedViewRequest;
import com.google.bigtable.admin.v2.ListAuthorizedViewsRequest;
import com.google.bigtable.admin.v2.ListAuthorizedViewsResponse;
import com.google.bigtable.admin.v2.UpdateAuthorizedViewMetadata;
import com.google.bigtable.admin.v2.UpdateAuthorizedViewRequest;
import com.google.iam.v1.Binding;
import com.google.iam.v1.GetIamPolicyRequest;
import com.google.iam.v1.Policy;
import com.google.iam.v1.SetIamPolicyRequest;
import com.google.longrunning.Operation;
import com.google.protobuf.Any;
import com.google.protobuf.ByteString;
import com.google.protobuf.Empty;
import com.google.protobuf.Message;
import io.tabula.actors.master.Master;
import io.tabula.actors.master.TableAccess;
import io.tabula.actors.master.TableInfo;
import io.tabula.actors.master.ViewInfo;
import io.tabula.cluster.routing.Router;
import io.tabula.cluster.security.AccessPolicy;
import io.tabula.cluster.security.Roles;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletionStage;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The table-admin RPCs about who may do what: the IAM policies of tables and authorized views
 * (backups' are {@link BackupPolicies}'s)
 * ({@code GetIamPolicy}, {@code SetIamPolicy}; {@code TestIamPermissions} is answered in front
 * of the services, where the caller is known) and the views themselves. Changes go to the
 * master as {@link Master.ChangeAccess} and are answered once this node's copy of the
 * directory has them; reads come from that copy. An etag is the version of what it tags, so a
 * change made against an older one is ABORTED.
 */
final class AccessService {
  private static final Pattern VIEW = Pattern.compile(
      "(projects/[^/]+/instances/[^/]+)/tables/([^/]+)/authorizedViews/([^/]+)");
  private static final Pattern VIEW_ID = Pattern.compile("[_a-zA-Z0-9][-_.a-zA-Z0-9]{0,63}");
  /** The most row prefixes, families, and qualifiers of one family a view may name: every node holds every view. */
  static final int MAX_VIEW_ENTRIES = 1000;
  /** The longest row prefix or qualifier a view may name. */
  static final int MAX_VIEW_KEY_BYTES = 4096;
  /**
   * The largest filter a view's columns may make: half of what a request's filter may be (20
   * KiB), so that a caller's filter of up to the other half still fits beside it.
   */
  static final int MAX_VIEW_FILTER_BYTES = 10 * 1024;
  /** A view's family names, as tables' families are named. */
  private static final Pattern FAMILY = Pattern.compile("[-_.a-zA-Z0-9]{1,64}");

  private final AdminService admin;
  private final Router router;

  AccessService(AdminService admin, Router router) {
    this.admin = admin;
    this.router = router;
  }

  CompletionStage<Policy> getIamPolicy(GetIamPolicyRequest in) {
    return GrpcErrors.unary(() -> {
      Target t = target("resource", in.getResource());
      return router.table(t.table()).thenApply(info -> t.view().isEmpty() ? policy(info.access().bindings(),
          info.createdMicros(), info.access().policyVersion())
          : view(info, t).map(v -> policy(v.bindings(), info.createdMicros(), v.policyVersion())));
    });
  }

  CompletionStage<Policy> setIamPolicy(SetIamPolicyRequest in) {
    return GrpcErrors.unary(() -> {
      Target t = target("resource", in.getResource());
      Map<String, List<String>> bindings = bindings(in.getPolicy());
      ByteString etag = in.getPolicy().getEtag();
      return router.table(t.table()).thenCompose(now -> change(t.table(), new TableAccess.Change.SetPolicy(t.view(),
          bindings, etag.isEmpty() ? -1 : policyVersion("policy.etag", etag, now.createdMicros()))))
          .thenApply(info -> t.view().isEmpty()
              ? policy(info.access().bindings(), info.createdMicros(), info.access().policyVersion())
              : view(info, t).map(v -> policy(v.bindings(), info.createdMicros(), v.policyVersion())));
    });
  }

  CompletionStage<Operation> createAuthorizedView(CreateAuthorizedViewRequest in) {
    return GrpcErrors.unary(() -> {
      String table = Names.tableId("parent", in.getParent());
      String id = in.getAuthorizedViewId();
      if (!VIEW_ID.matcher(id).matches()) {
        throw GrpcErrors.invalid("authorized_view_id", "'" + id + "' must match [_a-zA-Z0-9][-_.a-zA-Z0-9]* and be"
            + " at most 64 characters");
      }
      ViewInfo view = definition("authorized_view", id, in.getAuthorizedView(), 0);
      Target made = new Target(in.getParent(), table, id);
      return change(table, new TableAccess.Change.CreateView(view)).thenApply(info -> done(
          view(info, made).map(v -> toProto(in.getParent(), v, true)),
          CreateAuthorizedViewMetadata.newBuilder().setOriginalRequest(in).build()));
    });
  }

  CompletionStage<ListAuthorizedViewsResponse> listAuthorizedViews(ListAuthorizedViewsRequest in) {
    return GrpcErrors.unary(() -> {
      String table = Names.tableId("parent", in.getParent());
      boolean full = in.getView() != AuthorizedView.ResponseView.NAME_ONLY;
      return router.table(table).thenApply(info -> {
        ListAuthorizedViewsResponse.Builder b = ListAuthorizedViewsResponse.newBuilder();
        info.access().views().values().forEach(v -> b.addAuthorizedViews(toProto(in.getParent(), v, full)));
        return b.build();
      });
    });
  }

  CompletionStage<AuthorizedView> getAuthorizedView(GetAuthorizedViewRequest in) {
    return GrpcErrors.unary(() -> {
      Target t = viewTarget("name", in.getName());
      boolean full = in.getView() != AuthorizedView.ResponseView.NAME_ONLY;
      return router.table(t.table()).thenApply(info -> view(info, t).map(v -> toProto(t.tableName(), v, full)));
    });
  }

  CompletionStage<Operation> updateAuthorizedView(UpdateAuthorizedViewRequest in) {
    return GrpcErrors.unary(() -> {
      AuthorizedView update = in.getAuthorizedView();
      Target t = viewTarget("authorized_view.name", update.getName());
      List<String> paths = in.getUpdateMask().getPathsList();
      for (String p : paths) {
        if (!p.equals("subset_view") && !p.equals("deletion_protection")) {
          throw GrpcErrors.invalid("update_mask", "'" + p + "' cannot be updated (subset_view, deletion_protection)");
        }
      }
      long ifVersion = update.getEtag().isEmpty() ? -1 : version("authorized_view.etag",
          ByteString.copyFromUtf8(update.getEtag()));
      boolean all = paths.isEmpty();
      boolean subset = all || paths.contains("subset_view");
      // Only what is updated must be given (lifting deletion protection carries no subset).
      ViewInfo asked = subset ? definition("authorized_view", t.view(), update, 0) : null;
      return router.table(t.table()).thenCompose(info -> {
        ViewInfo now = view(info, t).map(v -> v);
        ViewInfo next = new ViewInfo(t.view(), subset ? asked.rowPrefixes() : now.rowPrefixes(),
            subset ? asked.families() : now.families(),
            all || paths.contains("deletion_protection") ? update.getDeletionProtection() : now.deletionProtection(),
            0, Map.of(), 0);
        // Without an etag, against the version the fields kept were read at: a change made meanwhile through
        // another node is then ABORTED (read again), not undone.
        return change(t.table(), new TableAccess.Change.UpdateView(next, ifVersion >= 0 ? ifVersion : now.version()));
      }).thenApply(info -> done(view(info, t).map(v -> toProto(t.tableName(), v, true)),
          UpdateAuthorizedViewMetadata.newBuilder().setOriginalRequest(in).build()));
    });
  }

  CompletionStage<Empty> deleteAuthorizedView(DeleteAuthorizedViewRequest in) {
    return GrpcErrors.unary(() -> {
      Target t = viewTarget("name", in.getName());
      long ifVersion = in.getEtag().isEmpty() ? -1 : version("etag", ByteString.copyFromUtf8(in.getEtag()));
      return change(t.table(), new TableAccess.Change.DeleteView(t.view(), ifVersion))
          .thenApply(info -> Empty.getDefaultInstance());
    });
  }

  private CompletionStage<TableInfo> change(String table, TableAccess.Change change) {
    return admin.seen(admin.<TableInfo>askMaster(r -> new Master.ChangeAccess(table, change, r)));
  }

  /** A table, or a view of one, that a policy belongs to. */
  private record Target(String tableName, String table, String view) {}

  /** The view of {@code info} that {@code t} names, or NOT_FOUND. */
  private static Wrapped<ViewInfo> view(TableInfo info, Target t) {
    ViewInfo v = info.access().views().get(t.view());
    if (v == null) {
      throw GrpcErrors.notFound("authorized view " + t.view() + " of table " + t.table() + " not found");
    }
    return new Wrapped<>(v);
  }

  /** A value to map, so that a lookup that may throw reads as one expression. */
  private record Wrapped<T>(T value) {
    <R> R map(java.util.function.Function<T, R> f) {
      return f.apply(value);
    }
  }

  private static Target target(String field, String resource) {
    Matcher v = VIEW.matcher(resource);
    if (v.matches()) {
      return new Target(v.group(1) + "/tables/" + v.group(2), Names.checkTableId(field, v.group(2)), v.group(3));
    }
    return new Target(resource, Names.tableId(field, resource), "");
  }

  private static Target viewTarget(String field, String name) {
    Matcher v = VIEW.matcher(name);
    if (!v.matches()) {
      throw GrpcErrors.invalid(field, "'" + name + "' is not an authorized view name of the form "
          + "projects/{project}/instances/{instance}/tables/{table}/authorizedViews/{authorized_view}");
    }
    return new Target(v.group(1) + "/tables/" + v.group(2), Names.checkTableId(field, v.group(2)), v.group(3));
  }

  /** A policy's bindings, checked: roles Tabula knows, members it can match, no conditions. */
  static Map<String, List<String>> bindings(Policy policy) {
    if (policy.getBindingsCount() > MAX_VIEW_ENTRIES) {
      throw GrpcErrors.invalid("policy.bindings", "has " + policy.getBindingsCount() + " bindings, over the limit of "
          + MAX_VIEW_ENTRIES);
    }
    Map<String, List<String>> out = new LinkedHashMap<>();
    for (int i = 0; i < policy.getBindingsCount(); i++) {
      Binding b = policy.getBindings(i);
      String field = "policy.bindings[" + i + "]";
      if (!Roles.known(b.getRole())) {
        throw GrpcErrors.invalid(field + ".role", "'" + b.getRole() + "' is not a role Tabula knows ("
            + String.join(", ", new java.util.TreeSet<>(Roles.names())) + ")");
      }
      if (b.hasCondition()) {
        throw GrpcErrors.invalid(field + ".condition", "conditional bindings are not supported by Tabula");
      }
      if (b.getMembersCount() > MAX_VIEW_ENTRIES) {
        throw GrpcErrors.invalid(field + ".members", "has over " + MAX_VIEW_ENTRIES + " members");
      }
      List<String> members = out.computeIfAbsent(b.getRole(), r -> new ArrayList<>());
      for (int m = 0; m < b.getMembersCount(); m++) {
        String problem = AccessPolicy.memberProblem(b.getMembers(m));
        if (problem != null) {
          throw GrpcErrors.invalid(field + ".members[" + m + "]", problem);
        }
        if (!members.contains(b.getMembers(m))) {
          members.add(b.getMembers(m));
        }
      }
    }
    return out;
  }

  /**
   * A policy as the API gives it. Its etag is the table's creation time and the policy's
   * version, so that an etag read before a table was deleted and made again does not match the
   * new table's.
   */
  private static Policy policy(Map<String, List<String>> bindings, long tableCreated, long version) {
    Policy.Builder p = Policy.newBuilder().setVersion(1).setEtag(ByteString.copyFromUtf8(tableCreated + "." + version));
    bindings.forEach((role, members) -> p.addBindings(Binding.newBuilder().setRole(role).addAllMembers(members)));
    return p.build();
  }

  /** The policy version a policy etag names; ABORTED for one of an earlier table of the same name. */
  private static long policyVersion(String field, ByteString etag, long tableCreated) {
    String text = etag.toStringUtf8();
    int dot = text.indexOf('.');
    if (dot <= 0) {
      throw notAnEtag(field);
    }
    if (!text.substring(0, dot).equals(Long.toString(tableCreated))) {
      throw GrpcErrors.status(io.tabula.protocol.errors.ErrorCode.ABORTED, field + ": the table was deleted and made"
          + " again since this etag was read: read the policy again", field);
    }
    return version(field, ByteString.copyFromUtf8(text.substring(dot + 1)));
  }

  private static long version(String field, ByteString etag) {
    try {
      long v = Long.parseLong(etag.toStringUtf8());
      if (v >= 0) {
        return v;
      }
    } catch (NumberFormatException e) {
      // refused below
    }
    throw notAnEtag(field);
  }

  private static RuntimeException notAnEtag(String field) {
    return GrpcErrors.invalid(field, "is not an etag this node gave (send back the one the last read returned)");
  }

  /** The view {@code v} defines, checked against the limits; {@code field} names it in a refusal. */
  private static ViewInfo definition(String field, String id, AuthorizedView v, long version) {
    if (!v.hasSubsetView()) {
      throw GrpcErrors.invalid(field + ".subset_view", "is required: the rows and columns the view shows");
    }
    AuthorizedView.SubsetView s = v.getSubsetView();
    List<String> rows = keys(field + ".subset_view.row_prefixes", s.getRowPrefixesList());
    if (s.getFamilySubsetsCount() > MAX_VIEW_ENTRIES) {
      throw GrpcErrors.invalid(field + ".subset_view.family_subsets", "names over " + MAX_VIEW_ENTRIES + " families");
    }
    Map<String, ViewInfo.FamilySubset> families = new LinkedHashMap<>();
    s.getFamilySubsetsMap().forEach((family, f) -> {
      String at = field + ".subset_view.family_subsets[" + family + "]";
      if (!FAMILY.matcher(family).matches()) {
        throw GrpcErrors.invalid(at, "'" + family + "' is not a family name ([-_.a-zA-Z0-9], at most 64)");
      }
      families.put(family, new ViewInfo.FamilySubset(keys(at + ".qualifiers", f.getQualifiersList()),
          keys(at + ".qualifier_prefixes", f.getQualifierPrefixesList())));
    });
    ViewInfo view = new ViewInfo(id, rows, families, v.getDeletionProtection(), version, Map.of(), 0);
    int filterBytes = Views.filter(view, null).getSerializedSize();
    if (filterBytes > MAX_VIEW_FILTER_BYTES) {
      // Every read through the view runs its columns as a filter before the caller's, which must fit beside it.
      throw GrpcErrors.invalid(field + ".subset_view.family_subsets", "names columns that make a filter of "
          + filterBytes + " bytes, over the limit of " + MAX_VIEW_FILTER_BYTES + " (name fewer qualifiers, or"
          + " prefixes of them)");
    }
    return view;
  }

  private static List<String> keys(String field, List<ByteString> keys) {
    if (keys.size() > MAX_VIEW_ENTRIES) {
      throw GrpcErrors.invalid(field, "has " + keys.size() + " entries, over the limit of " + MAX_VIEW_ENTRIES);
    }
    List<String> out = new ArrayList<>();
    for (int i = 0; i < keys.size(); i++) {
      if (keys.get(i).size() > MAX_VIEW_KEY_BYTES) {
        throw GrpcErrors.invalid(field + "[" + i + "]", "is " + keys.get(i).size() + " bytes, over the limit of "
            + MAX_VIEW_KEY_BYTES);
      }
      out.add(keys.get(i).toString(StandardCharsets.ISO_8859_1));
    }
    return out;
  }

  static AuthorizedView toProto(String tableName, ViewInfo v, boolean full) {
    AuthorizedView.Builder b = AuthorizedView.newBuilder().setName(tableName + "/authorizedViews/" + v.name());
    if (!full) {
      return b.build();
    }
    AuthorizedView.SubsetView.Builder s = AuthorizedView.SubsetView.newBuilder();
    v.rowPrefixes().forEach(p -> s.addRowPrefixes(ByteString.copyFrom(p, StandardCharsets.ISO_8859_1)));
    v.families().forEach((family, f) -> {
      AuthorizedView.FamilySubsets.Builder fb = AuthorizedView.FamilySubsets.newBuilder();
      f.qualifiers().forEach(q -> fb.addQualifiers(ByteString.copyFrom(q, StandardCharsets.ISO_8859_1)));
      f.qualifierPrefixes().forEach(q -> fb.addQualifierPrefixes(ByteString.copyFrom(q, StandardCharsets.ISO_8859_1)));
      s.putFamilySubsets(family, fb.build());
    });
    return b.setSubsetView(s).setEtag(Long.toString(v.version())).setDeletionProtection(v.deletionProtection())
        .build();
  }

  /** A finished long-running operation with {@code response}: the change is made when the call answers. */
  private static Operation done(Message response, Message metadata) {
    return Operation.newBuilder().setName("operations/" + UUID.randomUUID()).setDone(true)
        .setMetadata(Any.pack(metadata)).setResponse(Any.pack(response)).build();
  }
}
