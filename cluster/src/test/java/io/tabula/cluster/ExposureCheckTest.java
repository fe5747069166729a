package io.tabula.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import io.tabula.cluster.security.TlsSettings;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Secure by default: a node on a non-loopback address without TLS and authentication does not start. */
class ExposureCheckTest {
  private static final TlsSettings TLS = new TlsSettings(Optional.of(Path.of("node.crt")), Optional.of(Path.of(
      "node.key")), Optional.empty(), Optional.empty(), Duration.ofSeconds(10));

  @Test
  void loopbackNeedsNothing() {
    for (String host : new String[] {"127.0.0.1", "localhost", "::1", "127.0.0.2"}) {
      assertTrue(ExposureCheck.loopback(host), host);
      ExposureCheck.check(host, TlsSettings.none(), false, false);
    }
  }

  @Test
  void anyOtherAddressNeedsTlsAndAuthenticationOrInsecure() {
    assertFalse(ExposureCheck.loopback("0.0.0.0"));
    StartRefusedException neither = assertThrows(StartRefusedException.class,
        () -> ExposureCheck.check("0.0.0.0", TlsSettings.none(), false, false));
    assertEquals(StartRefusedException.Reason.EXPOSED, neither.reason());
    assertTrue(neither.getMessage().contains("--insecure") && neither.getMessage().contains("--tls-cert")
        && neither.getMessage().contains("--auth"), neither.getMessage());
    StartRefusedException noAuth = assertThrows(StartRefusedException.class,
        () -> ExposureCheck.check("0.0.0.0", TLS, false, false));
    assertFalse(noAuth.getMessage().contains("--tls-cert"), noAuth.getMessage());
    assertThrows(StartRefusedException.class, () -> ExposureCheck.check("0.0.0.0", TlsSettings.none(), true, false));
    ExposureCheck.check("0.0.0.0", TLS, true, false);
    ExposureCheck.check("0.0.0.0", TlsSettings.none(), false, true);
  }

  /** The refusal comes before anything is created: no actor system, no data directory. */
  @Test
  void aNodeOnAllAddressesWithoutSecurityRefusesToStart(@TempDir Path dir) {
    Path data = dir.resolve("data");
    StartRefusedException e = assertThrows(StartRefusedException.class, () -> TabulaNode.start(ConfigFactory.parseMap(
        Map.of("tabula.node.host", "0.0.0.0", "tabula.node.data-dir", data.toString(), "tabula.node.grpc-port", 0,
            "tabula.node.http-port", 0))));
    assertEquals(StartRefusedException.Reason.EXPOSED, e.reason());
    assertFalse(data.toFile().exists());
  }
}
