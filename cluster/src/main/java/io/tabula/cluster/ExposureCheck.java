package io.tabula.cluster;

import io.tabula.cluster.security.NodeSecurity;
import io.tabula.cluster.security.TlsSettings;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Secure by default: a node whose ports (gRPC, Management HTTP, cluster) listen on an address
 * other than loopback must have TLS ({@code --tls-cert}, {@code --tls-key}) and authentication
 * ({@code --auth}), or be told {@code --insecure} ({@code tabula.node.insecure = on}), which
 * it then logs as a warning at every start. On loopback nothing is asked: development stays
 * as simple as it was.
 */
final class ExposureCheck {
  private static final Logger LOG = LoggerFactory.getLogger(ExposureCheck.class);

  private ExposureCheck() {}

  /** {@code security}, once {@link #check} finds it fit for {@code host}. */
  static NodeSecurity checked(String host, NodeSecurity security) {
    check(host, security.tls(), security.guard().authenticates(), security.insecure());
    return security;
  }

  /**
   * Throws {@link StartRefusedException} ({@code EXPOSED}) for a node on a non-loopback
   * {@code host} that lacks TLS or authentication and is not {@code insecure}.
   */
  static void check(String host, TlsSettings tls, boolean authenticates, boolean insecure) {
    if (loopback(host)) {
      return;
    }
    List<String> missing = new ArrayList<>();
    if (!tls.enabled()) {
      missing.add("TLS (--tls-cert FILE --tls-key FILE, or tabula.node.tls)");
    }
    if (!authenticates) {
      missing.add("authentication (--auth FILE, or tabula.security)");
    }
    if (missing.isEmpty()) {
      return;
    }
    String what = "this node would listen on " + host + ", which is not a loopback address, without "
        + String.join(" and without ", missing) + ": anyone who reaches its ports could read, change and"
        + " delete every table and join its cluster";
    if (insecure) {
      LOG.warn("{}; starting anyway, as --insecure (tabula.node.insecure) asks", what);
      return;
    }
    throw new StartRefusedException(StartRefusedException.Reason.EXPOSED, what + ". Configure them"
        + " (docs/security.md), listen on 127.0.0.1, or pass --insecure to accept the risk.");
  }

  /** Whether {@code host} names only this machine's loopback interface. */
  static boolean loopback(String host) {
    try {
      for (InetAddress a : InetAddress.getAllByName(host)) {
        if (!a.isLoopbackAddress()) {
          return false;
        }
      }
      return true;
    } catch (UnknownHostException e) {
      return false;
    }
  }
}
