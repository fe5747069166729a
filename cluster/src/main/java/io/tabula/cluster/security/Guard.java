package io.tabula.cluster.security;

import com.google.iam.v1.Policy;
import io.tabula.protocol.errors.ErrorCode;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.security.cert.Certificate;
import java.security.cert.X509Certificate;
import java.util.Optional;
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
 * Audit} log. A node without authentication ({@link #open()}) admits every call as {@link
 * #ANONYMOUS}, as on loopback development.
 *
 * <p>It runs before a request's body is read, so a caller without credentials costs the
 * node a header lookup and nothing more. Thread-safe (immutable; the authenticator is).
 */
public final class Guard {
  /** The principal of every call to a node without authentication. */
  public static final Principal ANONYMOUS = new Principal("tabula:anonymous");
  private static final String AUTHORIZATION = "authorization";
  private static final String REQUEST_PARAMS = "x-goog-request-params";

  /** A guard's answer: the caller, or why the call is refused. */
  public sealed interface Admission {
    /** The call may go on; {@code principal} made it. */
    record Admitted(Principal principal) implements Admission {}

    /** The call is refused: UNAUTHENTICATED or PERMISSION_DENIED, with a message for the caller. */
    record Refused(ErrorCode code, String message) implements Admission {}
  }

  private final Optional<Authenticator> authenticator;
  private final boolean certificates;
  private final Policy instance;

  private Guard(Optional<Authenticator> authenticator, boolean certificates, Policy instance) {
    this.authenticator = authenticator;
    this.certificates = certificates;
    this.instance = instance;
  }

  /** A guard that admits every call (no authentication configured). */
  public static Guard open() {
    return new Guard(Optional.empty(), false, Policy.getDefaultInstance());
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
    return new Guard(authenticator, certificates, instance);
  }

  /** Whether this guard checks anything. */
  public boolean authenticates() {
    return authenticator.isPresent() || certificates;
  }

  /** The admission of a gRPC call to the method at {@code path} (one of the node's services, or not). */
  public Admission admitCall(HttpRequest request, String path) {
    if (!authenticates()) {
      return new Admission.Admitted(ANONYMOUS);
    }
    String method = path.startsWith("/") ? path.substring(1) : path;
    Optional<MethodPermissions.Needed> needed = MethodPermissions.of(path);
    // A path that is no method of the node's services is answered (UNIMPLEMENTED, not found) only to a caller
    // who may read the instance's shape.
    return admit(request, method, needed.map(MethodPermissions.Needed::permission).orElse("bigtable.tables.list"),
        claimedResource(request), isChange(path));
  }

  /**
   * The admission of a Management HTTP request that needs {@code permission} ({@code what}
   * names the route for the audit log); a change is audited when allowed.
   */
  public Admission admitHttp(HttpRequest request, String permission, String what, boolean change) {
    if (!authenticates()) {
      return new Admission.Admitted(ANONYMOUS);
    }
    return admit(request, what, permission, "", change);
  }

  private Admission admit(HttpRequest request, String method, String permission, String resource, boolean change) {
    Optional<HttpHeader> header = request.getHeader(AUTHORIZATION);
    Principal principal;
    if (header.isPresent() || !certificates) {
      if (authenticator.isEmpty()) {
        return unauthenticated(method, resource, "this node takes client certificates, not bearer tokens");
      }
      Authentication a = authenticator.get().authenticate(header.map(HttpHeader::value).orElse(null));
      if (a instanceof Authentication.Refused r) {
        return unauthenticated(method, resource, r.reason());
      }
      principal = ((Authentication.Authenticated) a).principal();
    } else {
      Optional<Principal> fromCertificate = certificatePrincipal(request);
      if (fromCertificate.isEmpty()) {
        return unauthenticated(method, resource, "the call carries neither an authorization header nor a client"
            + " certificate the node trusts");
      }
      principal = fromCertificate.get();
    }
    if (!permission.isEmpty() && !AccessPolicy.allows(instance, principal, permission)) {
      String message = principal.member() + " lacks the permission " + permission + " on the instance"
          + (resource.isEmpty() ? "" : " (the call names " + resource + ")");
      Audit.denied(principal, method, resource, "lacks " + permission);
      return new Admission.Refused(ErrorCode.PERMISSION_DENIED, message);
    }
    if (change) {
      Audit.allowed(principal, method, resource);
    }
    return new Admission.Admitted(principal);
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
