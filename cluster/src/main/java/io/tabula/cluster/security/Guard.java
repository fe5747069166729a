package io.tabula.cluster.security;

import com.google.iam.v1.Policy;
import io.tabula.protocol.errors.ErrorCode;
import java.net.URLDecoder;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.Base64;
import java.nio.charset.StandardCharsets;
import java.security.cert.Certificate;
import java.security.cert.X509Certificate;
import io.tabula.actors.master.TableAccess;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;
import java.util.function.Supplier;
import javax.net.ssl.SSLPeerUnverifiedException;
import org.apache.pekko.http.javadsl.model.AttributeKeys;
import org.apache.pekko.http.javadsl.model.HttpHeader;
import org.apache.pekko.http.javadsl.model.HttpRequest;
import org.apache.pekko.http.javadsl.model.SslSessionInfo;

/**
 * The one check in front of a node's services: who is calling ({@link Authenticator} for
 * {@code authorization: Bearer}, or a verified client certificate's subject as {@code
 * cert:SUBJECT}), and whether the instance's policy lets them do what the call does ({@link
 * MethodPermissions}, {@link Roles}). Denials and allowed admin changes go to the {@link
 * Audit} log. Tables', views' and backups' own policies are read when the instance's does not
 * allow a call ({@link #authorizeOn}). A node without authentication ({@link #open()}) admits every call as {@link
 * #ANONYMOUS}, as on loopback development.
 *
 * <p>It runs before a request's body is read, so a caller without credentials costs the
 * node a header lookup and nothing more. Thread-safe (immutable; the authenticator is).
 */
public final class Guard {
  private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(Guard.class);
  /** The principal of every call to a node without authentication. */
  public static final Principal ANONYMOUS = new Principal("tabula:anonymous");
  /** The node itself, calling its own endpoint (its warm-up) with {@link #internalToken}: it may do anything. */
  public static final Principal NODE = new Principal("tabula:node");
  private static final String AUTHORIZATION = "authorization";
  private static final String REQUEST_PARAMS = "x-goog-request-params";

  /** A guard's answer: the caller, or why the call is refused. */
  public sealed interface Admission {
    /**
     * The call may go on; {@code principal} made it. When {@code onResource}, the instance's
     * policy did not allow it: whether the policy of the table or view the request names does
     * is decided once its body is read ({@link #authorizeOn}).
     */
    record Admitted(Principal principal, boolean onResource) implements Admission {}

    /** The call is refused: UNAUTHENTICATED or PERMISSION_DENIED, with a message for the caller. */
    record Refused(ErrorCode code, String message) implements Admission {}
  }

  private final Optional<Authenticator> authenticator;
  private final boolean certificates;
  private final Policy instance;
  /** A table's access by id, from the node's copy of the directory; null for a table that is not there. */
  private final Function<String, TableAccess> tables;
  /**
   * A backup's policy (members by role) by backup id, read from storage (it blocks: see {@link
   * #readsStorage}); empty for a backup without one. Throws {@link java.io.UncheckedIOException}
   * when it cannot be read.
   */
  private final Function<String, Map<String, List<String>>> backups;
  /** The header value the node's own calls carry: {@code Bearer} and a random token made at start, never stored. */
  private final String internal;

  private Guard(Optional<Authenticator> authenticator, boolean certificates, Policy instance,
      Function<String, TableAccess> tables, Function<String, Map<String, List<String>>> backups, String internal) {
    this.authenticator = authenticator;
    this.certificates = certificates;
    this.instance = instance;
    this.tables = tables;
    this.backups = backups;
    this.internal = internal;
  }

  /** A guard that admits every call (no authentication configured). */
  public static Guard open() {
    return new Guard(Optional.empty(), false, Policy.getDefaultInstance(), t -> null, b -> Map.of(),
        newInternalToken());
  }

  /**
   * A guard that authenticates with {@code authenticator} (empty: by client certificate
   * only), takes client certificates' subjects as principals when {@code certificates}, and
   * authorizes by {@code instance}.
   */
  public static Guard of(Optional<Authenticator> authenticator, boolean certificates, Policy instance) {
    if (authenticator.isEmpty() && !certificates) {
      throw new IllegalArgumentException("a guard needs an authenticator or client certificates");
    }
    return new Guard(authenticator, certificates, instance, t -> null, b -> Map.of(), newInternalToken());
  }

  /** This guard, reading the policies of tables and their views with {@code tables} (null: no such table). */
  public Guard withTables(Function<String, TableAccess> tables) {
    return new Guard(authenticator, certificates, instance, tables, backups, internal);
  }

  /**
   * This guard, reading backups' policies with {@code backups} (by backup id: members by role,
   * empty for none; {@link java.io.UncheckedIOException} when it cannot be read). It reads
   * storage: a caller asks {@link #readsStorage} first and calls off its connection's thread.
   */
  public Guard withBackups(Function<String, Map<String, List<String>>> backups) {
    return new Guard(authenticator, certificates, instance, tables, backups, internal);
  }

  /**
   * Whether deciding on the resource {@code fields} name (by {@link #authorizeOn} or {@link
   * #held}) reads storage, and so must not run on a connection's thread: a backup's policy.
   */
  public boolean readsStorage(Map<String, String> fields) {
    return authenticates() && Resource.named(fields).backup().isPresent();
  }

  /**
   * The token of the node's own calls to its endpoint (its warm-up), made at random when the
   * node starts: it never leaves the process but over loopback to itself.
   */
  public String internalToken() {
    return internal.substring("Bearer ".length());
  }

  private static String newInternalToken() {
    byte[] random = new byte[32];
    new SecureRandom().nextBytes(random);
    return "Bearer " + Base64.getUrlEncoder().withoutPadding().encodeToString(random);
  }

  /** Whether {@code value} is the node's own: compared in constant time. */
  private boolean isInternal(String value) {
    return value.length() == internal.length() && MessageDigest.isEqual(value.getBytes(StandardCharsets.US_ASCII),
        internal.getBytes(StandardCharsets.US_ASCII));
  }

  /** Whether this guard checks anything. */
  public boolean authenticates() {
    return authenticator.isPresent() || certificates;
  }

  /** The admission of a gRPC call to the method at {@code path} (one of the node's services, or not). */
  public Admission admitCall(HttpRequest request, String path) {
    if (!authenticates()) {
      return new Admission.Admitted(ANONYMOUS, false);
    }
    String method = path.startsWith("/") ? path.substring(1) : path;
    Optional<MethodPermissions.Needed> needed = MethodPermissions.of(path);
    // A path that is no method of the node's services is answered (UNIMPLEMENTED, not found) only to a caller
    // who may read the instance's shape.
    return admit(request, method, needed.map(MethodPermissions.Needed::permission).orElse("bigtable.tables.list"),
        needed.flatMap(MethodPermissions.Needed::alsoOnInstance).orElse(""), () -> claimedResource(request),
        isChange(path), needed.isPresent());
  }

  /**
   * The admission of a Management HTTP request that needs {@code permission} ({@code what}
   * names the route for the audit log); a change is audited when allowed.
   */
  public Admission admitHttp(HttpRequest request, String permission, String what, boolean change) {
    if (!authenticates()) {
      return new Admission.Admitted(ANONYMOUS, false);
    }
    return admit(request, what, permission, "", () -> "", change, false);
  }

  /**
   * Whether a call admitted {@code onResource} may be made on the resource its request names
   * ({@code fields}: {@link ResourceFields}): the permission the method needs, held through the
   * policy of that table or view, or of the table of that view (a grant on a view does not
   * reach its table). Empty when it may; the denial is audited.
   */
  public Optional<Admission.Refused> authorizeOn(Admission.Admitted a, String path, Map<String, String> fields) {
    if (!a.onResource()) {
      return Optional.empty();
    }
    MethodPermissions.Needed needed = MethodPermissions.of(path).orElseThrow();
    Resource r = Resource.named(fields);
    String permission = r.view().isPresent() ? needed.onView().orElse(needed.permission())
        : r.backup().isPresent() ? needed.onBackup().orElse(needed.permission()) : needed.permission();
    TableAccess access = r.table().isEmpty() ? null : tables.apply(r.table().get());
    String method = path.substring(1);
    Map<String, List<String>> backup;
    try {
      backup = r.backup().isEmpty() ? Map.of() : backups.apply(r.backup().get());
    } catch (java.io.UncheckedIOException e) {
      LOG.warn("the policy of {} could not be read; the call is refused", r.name(), e);
      return Optional.of(new Admission.Refused(ErrorCode.UNAVAILABLE, "the policy of " + r.name() + " could not be"
          + " read: " + e.getCause().getMessage()));
    }
    // A backup's own permission may also come from the instance (the call was admitted on the table permission).
    boolean onBackup = r.backup().isPresent() && (AccessPolicy.allows(backup, a.principal(), permission)
        || AccessPolicy.allows(instance, a.principal(), permission));
    if (onBackup || access != null && (AccessPolicy.allows(access.bindings(), a.principal(), permission)
        || r.view().map(v -> access.views().get(v)).map(v -> AccessPolicy.allows(v.bindings(), a.principal(),
            permission)).orElse(false))) {
      if (isChange(path)) {
        Audit.allowed(a.principal(), method, r.name());
      }
      return Optional.empty();
    }
    String message = a.principal().member() + " lacks the permission " + permission + " on " + r.name();
    Audit.denied(a.principal(), method, r.name(), "lacks " + permission);
    return Optional.of(new Admission.Refused(ErrorCode.PERMISSION_DENIED, message));
  }

  /**
   * The refusal of a call admitted {@code onResource} whose resource cannot be read (a
   * streaming call, a request that is not gRPC): the instance's policy did not allow it.
   */
  public Admission.Refused deniedOnInstance(Admission.Admitted a, String path) {
    String permission = MethodPermissions.of(path).map(MethodPermissions.Needed::permission).orElse("");
    Audit.denied(a.principal(), path.substring(1), "", "lacks " + permission);
    return new Admission.Refused(ErrorCode.PERMISSION_DENIED, a.principal().member() + " lacks the permission "
        + permission + " on the instance");
  }

  /** The instance's policy (the auth file's admins and bindings), as the instance admin API shows it. */
  public Policy instancePolicy() {
    return instance;
  }

  /**
   * Which of {@code permissions} {@code principal} holds on the table, view or backup {@code
   * resource} names (through its policy, its table's, or the instance's): Cloud IAM's {@code
   * TestIamPermissions}, which any authenticated caller may ask about themselves. Reads storage
   * for a backup ({@link #readsStorage}); throws {@link java.io.UncheckedIOException} if its
   * policy cannot be read.
   */
  public List<String> held(Principal principal, String resource, List<String> permissions) {
    Resource r = Resource.named(Map.of("resource", resource));
    TableAccess access = r.table().isEmpty() ? null : tables.apply(r.table().get());
    Map<String, List<String>> backup = r.backup().isEmpty() || !authenticates() ? Map.of()
        : backups.apply(r.backup().get());
    List<String> out = new ArrayList<>();
    for (String p : permissions) {
      boolean held = !authenticates() || AccessPolicy.allows(instance, principal, p)
          || AccessPolicy.allows(backup, principal, p)
          || access != null && (AccessPolicy.allows(access.bindings(), principal, p) || r.view()
              .map(v -> access.views().get(v)).map(v -> AccessPolicy.allows(v.bindings(), principal, p)).orElse(false));
      if (held) {
        out.add(p);
      }
    }
    return out;
  }

  /** {@code resource}: what the call says it is about, for the audit log only; read when a line is written. */
  private Admission admit(HttpRequest request, String method, String permission, String alsoOnInstance,
      Supplier<String> resource, boolean change, boolean onResource) {
    Optional<HttpHeader> header = request.getHeader(AUTHORIZATION);
    if (header.isPresent() && isInternal(header.get().value())) {
      if (change) {
        Audit.allowed(NODE, method, resource.get());
      }
      return new Admission.Admitted(NODE, false);
    }
    Principal principal;
    if (header.isPresent() || !certificates) {
      if (authenticator.isEmpty()) {
        return unauthenticated(method, resource.get(), "this node takes client certificates, not bearer tokens");
      }
      Authentication a = authenticator.get().authenticate(header.map(HttpHeader::value).orElse(null));
      if (a instanceof Authentication.Refused r) {
        return unauthenticated(method, resource.get(), r.reason());
      }
      principal = ((Authentication.Authenticated) a).principal();
    } else {
      Optional<Principal> fromCertificate = certificatePrincipal(request);
      if (fromCertificate.isEmpty()) {
        return unauthenticated(method, resource.get(), "the call carries neither an authorization header nor a client"
            + " certificate the node trusts");
      }
      principal = fromCertificate.get();
    }
    if (!alsoOnInstance.isEmpty() && !AccessPolicy.allows(instance, principal, alsoOnInstance)) {
      String message = principal.member() + " lacks the permission " + alsoOnInstance + " on the instance, which"
          + " this call needs whatever else it names" + (resource.get().isEmpty() ? "" : " (the call names "
          + resource.get() + ")");
      Audit.denied(principal, method, resource.get(), "lacks " + alsoOnInstance);
      return new Admission.Refused(ErrorCode.PERMISSION_DENIED, message);
    }
    if (!permission.isEmpty() && !AccessPolicy.allows(instance, principal, permission)) {
      if (onResource) {
        return new Admission.Admitted(principal, true); // a table's or a view's policy may allow it
      }
      String message = principal.member() + " lacks the permission " + permission + " on the instance"
          + (resource.get().isEmpty() ? "" : " (the call names " + resource.get() + ")");
      Audit.denied(principal, method, resource.get(), "lacks " + permission);
      return new Admission.Refused(ErrorCode.PERMISSION_DENIED, message);
    }
    if (change) {
      Audit.allowed(principal, method, resource.get());
    }
    return new Admission.Admitted(principal, false);
  }

  private static Admission unauthenticated(String method, String resource, String reason) {
    Audit.unauthenticated(method, resource, reason);
    return new Admission.Refused(ErrorCode.UNAUTHENTICATED, reason);
  }

  /** {@code cert:} and the RFC 2253 subject of the client certificate the TLS handshake verified, if any. */
  private static Optional<Principal> certificatePrincipal(HttpRequest request) {
    Optional<SslSessionInfo> session = request.getAttribute(AttributeKeys.sslSession);
    if (session.isEmpty()) {
      return Optional.empty();
    }
    try {
      Certificate[] peer = session.get().getSession().getPeerCertificates();
      if (peer.length == 0 || !(peer[0] instanceof X509Certificate x)) {
        return Optional.empty();
      }
      return Optional.of(new Principal("cert:" + x.getSubjectX500Principal().getName()));
    } catch (SSLPeerUnverifiedException e) {
      return Optional.empty(); // no certificate was presented: not an error
    }
  }

  /**
   * The resource the call says it is about in {@code x-goog-request-params} (what the official
   * clients send for routing), for the audit log only: a caller may write anything there.
   */
  private static String claimedResource(HttpRequest request) {
    Optional<HttpHeader> params = request.getHeader(REQUEST_PARAMS);
    if (params.isEmpty()) {
      return "";
    }
    String value = params.get().value();
    if (value.length() > 1024) {
      return "";
    }
    for (String pair : value.split("&")) {
      int eq = pair.indexOf('=');
      if (eq > 0) {
        try {
          return URLDecoder.decode(pair.substring(eq + 1), StandardCharsets.UTF_8);
        } catch (IllegalArgumentException e) {
          return pair.substring(eq + 1); // not URL-encoded as it should be: kept as sent
        }
      }
    }
    return "";
  }

  /** Whether a call to {@code path} changes the instance (an admin change, audited when allowed). */
  private static boolean isChange(String path) {
    int slash = path.lastIndexOf('/');
    String rpc = path.substring(slash + 1);
    return path.startsWith("/google.bigtable.admin.") && !rpc.startsWith("Get") && !rpc.startsWith("List")
        && !rpc.startsWith("Check") && !rpc.startsWith("Test") && !rpc.startsWith("Generate")
        || rpc.equals("SetLocalityGroup");
  }
}
