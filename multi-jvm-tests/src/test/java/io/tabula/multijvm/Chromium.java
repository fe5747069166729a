package io.tabula.multijvm;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;

/**
 * Headless Chromium driven through ChromeDriver (Debian's packages, installed first by the
 * project's {@code bin/install-chromium} if missing), for tests that look at the web console
 * as a person would. The browser talks to 127.0.0.1 only: its background networking, updates,
 * sync and QUIC are off, and it gets a fresh profile folder. Closing it stops both processes.
 */
final class Chromium implements AutoCloseable {
  private static final Path BROWSER = Path.of("/usr/bin/chromium");
  private static final Path DRIVER = Path.of("/usr/bin/chromedriver");

  final ChromeDriver driver;
  private final ChromeDriverService service;

  private Chromium(ChromeDriver driver, ChromeDriverService service) {
    this.driver = driver;
    this.service = service;
  }

  /** A headless browser with a window of {@code width} by {@code height} and its profile under {@code profile}. */
  static Chromium start(Path profile, int width, int height) throws IOException, InterruptedException {
    return start(profile, width, height, false);
  }

  /**
   * As {@link #start(Path, int, int)}; with {@code anyCertificate}, the browser takes any
   * server certificate (a test CA's, which a user would add to the browser's trust store).
   */
  static Chromium start(Path profile, int width, int height, boolean anyCertificate)
      throws IOException, InterruptedException {
    install();
    ChromeDriverService service = new ChromeDriverService.Builder().usingDriverExecutable(DRIVER.toFile())
        .usingAnyFreePort().withLogFile(profile.resolve("chromedriver.log").toFile()).build();
    ChromeOptions options = new ChromeOptions();
    options.setBinary(BROWSER.toFile());
    options.addArguments("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync",
        "--disable-dev-shm-usage", "--user-data-dir=" + Files.createDirectories(profile.resolve("profile")),
        "--window-size=" + width + "," + height);
    options.setAcceptInsecureCerts(anyCertificate);
    ChromeDriver driver = new ChromeDriver(service, options);
    driver.manage().timeouts().pageLoadTimeout(Duration.ofSeconds(30)).scriptTimeout(Duration.ofSeconds(30));
    return new Chromium(driver, service);
  }

  /** Saves what the browser shows now as a PNG file. */
  void screenshot(Path file) throws IOException {
    Files.createDirectories(file.getParent());
    File shot = driver.getScreenshotAs(OutputType.FILE);
    Files.copy(shot.toPath(), file, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
  }

  private static void install() throws IOException, InterruptedException {
    if (Files.isExecutable(BROWSER) && Files.isExecutable(DRIVER)) {
      return;
    }
    Path script = null;
    for (Path p = Path.of("").toAbsolutePath(); p != null && script == null; p = p.getParent()) {
      if (Files.isRegularFile(p.resolve("bin").resolve("install-chromium"))) {
        script = p.resolve("bin").resolve("install-chromium");
      }
    }
    if (script == null) {
      throw new IllegalStateException("no Chromium installed and no bin/install-chromium above "
          + Path.of("").toAbsolutePath());
    }
    System.out.println("Chromium: not installed; running " + script);
    Process p = new ProcessBuilder("bash", script.toString()).inheritIO().start();
    if (!p.waitFor(10, TimeUnit.MINUTES) || p.exitValue() != 0) {
      p.destroyForcibly();
      throw new IllegalStateException(script + " failed");
    }
  }

  @Override
  public void close() {
    try {
      driver.quit();
    } finally {
      service.stop();
    }
  }
}
