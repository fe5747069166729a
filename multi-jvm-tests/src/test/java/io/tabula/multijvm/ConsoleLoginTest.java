package io.tabula.multijvm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tabula.cluster.security.TestPki;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.openqa.selenium.By;
import org.openqa.selenium.support.ui.WebDriverWait;

/**
 * The web console of a node with TLS and tokens, in a real browser (headless Chromium): its page
 * loads without a token (it holds no data), asks for one when the node answers 401, says so when
 * the token is refused, shows the cluster once given a viewer's token, and keeps the token for
 * the tab (the page loaded again asks nothing).
 */
@Timeout(value = 4, unit = TimeUnit.MINUTES)
@ExtendWith(ClusterFixture.LogsOnFailure.class)
class ConsoleLoginTest {
  private static final String VIEWER_TOKEN = "console-viewer-token-0123456789";

  @Test
  void theConsoleAsksForATokenAndKeepsItForTheTab() throws Exception {
    try (ClusterFixture cluster = new ClusterFixture()) {
      Path pki = Files.createDirectories(cluster.root.resolve("pki"));
      TestPki ca = TestPki.ca("console CA");
      Path caFile = ca.writeCertificate(pki.resolve("ca.crt"));
      TestPki.KeyFiles own = ca.issue("CN=n1,O=tabula").write(pki, "n1");
      Path auth = Files.writeString(pki.resolve("auth.conf"), "tabula.security {\n"
          + "  tokens = [ { principal = \"user:viewer@example.com\", token = \"" + VIEWER_TOKEN + "\" } ]\n"
          + "  bindings = [ { role = roles/bigtable.viewer, members = [\"user:viewer@example.com\"] } ]\n"
          + "}\n");
      cluster.flags = name -> List.of("--tls-cert", own.cert().toString(), "--tls-key", own.key().toString(),
          "--cluster-ca", caFile.toString(), "--auth", auth.toString());
      NodeJvm n1 = cluster.add("n1");
      try (Chromium chromium = Chromium.start(cluster.root.resolve("chromium"), 1280, 900, true)) {
        String page = "https://localhost:" + n1.httpPort + "/console/#/cluster";
        chromium.driver.get(page);
        awaitLogin(chromium, false);
        signIn(chromium, "not-a-token-anyone-has");
        awaitLogin(chromium, true);
        signIn(chromium, VIEWER_TOKEN);
        awaitLoaded(chromium);
        assertEquals(1, chromium.driver.findElements(By.cssSelector("#nodes tr.node")).size(),
            "the cluster page shows the node");
        chromium.screenshot(Path.of("target", "console-screenshots", "login-cluster.png"));
        chromium.driver.navigate().refresh();
        awaitLoaded(chromium);
        assertTrue(chromium.driver.findElements(By.id("login")).isEmpty(), "the tab kept its token");
      }
    }
  }

  /** Waits for the login form; with {@code refused}, for the one that says the token was refused. */
  private static void awaitLogin(Chromium chromium, boolean refused) {
    new WebDriverWait(chromium.driver, Duration.ofSeconds(20)).until(d -> !d.findElements(By.id("login")).isEmpty()
        && (!refused || d.findElement(By.id("login")).getText().contains("refused")));
  }

  private static void signIn(Chromium chromium, String token) {
    chromium.driver.findElement(By.id("token")).sendKeys(token);
    chromium.driver.findElement(By.cssSelector("#login button")).click();
  }

  private static void awaitLoaded(Chromium chromium) {
    new WebDriverWait(chromium.driver, Duration.ofSeconds(20)).until(d -> "#/cluster".equals(
        d.findElement(By.tagName("body")).getAttribute("data-loaded")));
  }
}
