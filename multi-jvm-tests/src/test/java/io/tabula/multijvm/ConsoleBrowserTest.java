package io.tabula.multijvm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.api.core.ApiFuture;
import com.google.cloud.bigtable.data.v2.BigtableDataClient;
import com.google.cloud.bigtable.data.v2.models.RowMutation;
import com.google.cloud.bigtable.data.v2.models.TableId;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.Semaphore;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.openqa.selenium.By;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.interactions.Actions;
import org.openqa.selenium.support.ui.Select;
import org.openqa.selenium.support.ui.WebDriverWait;

/**
 * The web console in a real browser (headless Chromium) against two node JVMs under a known
 * workload, checked for what a person would see, with a screenshot of every page under
 * {@code target/console-screenshots/}:
 * <ul>
 *   <li>the cluster page lists both nodes by name, the master's node marked, their tablet
 *       counts adding up to the tables' tablets;
 *   <li>the tables page and one table's page show the tablets with their owners;
 *   <li>the Key Visualizer of a table whose writes went mostly to rows starting with "c" is
 *       brightest in the band of that tablet, whichever measure colours it, and hovering there
 *       names the band's keys and tablet;
 *   <li>the Key Visualizer of a table written sequentially (keys rising with time through its
 *       eight tablets) shows the diagonal: the brightest band of each column moves down the
 *       keys as time goes right.
 * </ul>
 * The key visualizer runs here with 1 s columns and tablets reporting every 500 ms, so the
 * picture fills in seconds rather than minutes.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
@ExtendWith(ClusterFixture.LogsOnFailure.class)
class ConsoleBrowserTest {
  private static final Path SHOTS = Path.of("target", "console-screenshots");
  /** How long the sequential writer stays in each of its table's tablets. */
  private static final long SEQ_STEP_MILLIS = 2_500;
  private static final int SEQ_TABLETS = 8;

  @Test
  void consoleShowsTheClusterAndTheKeyVisualizerShowsTheLoad() throws Exception {
    try (ClusterFixture cluster = new ClusterFixture()) {
      cluster.configure("tabula.master.key-visualizer.column = 1s\ntabula.tablet.check-interval = 500ms\n");
      cluster.add("n1");
      cluster.add("n2");
      List<String> hotSplits = new ArrayList<>();
      for (char c = 'b'; c <= 'j'; c++) {
        hotSplits.add(String.valueOf(c));
      }
      ClusterFixture.createTable(cluster.node("n2"), "hot", hotSplits);
      List<String> seqSplits = new ArrayList<>();
      for (int i = 1; i < SEQ_TABLETS; i++) {
        seqSplits.add(String.valueOf(i));
      }
      ClusterFixture.createTable(cluster.node("n2"), "seq", seqSplits);
      for (NodeJvm n : cluster.nodes) {
        n.awaitReady(Duration.ofSeconds(60));
      }
      long written = workload(cluster);
      System.out.println("console test: " + written + " rows written");

      try (Chromium chromium = Chromium.start(cluster.root.resolve("chromium"), 1280, 900)) {
        String base = "http://" + NodeJvm.HOST + ":" + cluster.node("n2").httpPort + "/console/";
        clusterPage(chromium, base);
        tablePages(chromium, base);
        hotKeyViz(chromium, base);
        sequentialKeyViz(chromium, base);
        show(chromium, base + "#/operations", "operations");
        assertTrue(chromium.driver.findElement(By.id("operations")).isDisplayed(), "the operations page shows its list");
      }
    }
  }

  /**
   * Writes for {@code SEQ_TABLETS * SEQ_STEP_MILLIS}: to table "hot", 80% of rows starting
   * with "c" and the rest spread over a..j; to table "seq", keys rising with time, one tablet
   * after the other. Through both nodes with the official client; answers the rows written.
   */
  private static long workload(ClusterFixture cluster) throws Exception {
    AtomicLong done = new AtomicLong();
    List<BigtableDataClient> clients = List.of(ClusterFixture.data(cluster.node("n1")),
        ClusterFixture.data(cluster.node("n2")));
    try {
      Semaphore inFlight = new Semaphore(24);
      long start = System.currentTimeMillis();
      long end = start + SEQ_TABLETS * SEQ_STEP_MILLIS;
      long n = 0;
      while (System.currentTimeMillis() < end) {
        ThreadLocalRandom r = ThreadLocalRandom.current();
        String hotKey = r.nextInt(10) < 8 ? String.format("c%05d", r.nextInt(100_000))
            : (char) ('a' + r.nextInt(10)) + String.format("%05d", r.nextInt(100_000));
        long step = Math.min(SEQ_TABLETS - 1, (System.currentTimeMillis() - start) / SEQ_STEP_MILLIS);
        String seqKey = step + String.format("%09d", n);
        for (String[] w : List.of(new String[] {"hot", hotKey}, new String[] {"seq", seqKey})) {
          inFlight.acquire();
          ApiFuture<Void> f = clients.get((int) (n % 2)).mutateRowAsync(RowMutation.create(TableId.of(w[0]), w[1])
              .setCell("f", "q", "v" + n));
          f.addListener(() -> {
            inFlight.release();
            done.incrementAndGet();
          }, Runnable::run);
        }
        n++;
      }
      assertTrue(inFlight.tryAcquire(24, 60, TimeUnit.SECONDS), "every write was answered");
      return done.get();
    } finally {
      for (BigtableDataClient c : clients) {
        c.close();
      }
    }
  }

  private static void clusterPage(Chromium chromium, String base) throws Exception {
    show(chromium, base + "#/cluster", "cluster");
    List<WebElement> rows = chromium.driver.findElements(By.cssSelector("#nodes tr.node"));
    Set<String> names = new TreeSet<>();
    int tablets = 0;
    for (WebElement r : rows) {
      names.add(r.getAttribute("data-node"));
      tablets += Integer.parseInt(r.findElement(By.cssSelector("td.tablets")).getText().trim());
    }
    assertEquals(Set.of("n1", "n2"), names, "the cluster page lists both nodes");
    assertEquals(10 + SEQ_TABLETS, tablets, "the nodes' tablet counts add up to the tables' tablets");
    List<WebElement> master = chromium.driver.findElements(By.cssSelector("#nodes tr.node .badge.master"));
    assertEquals(1, master.size(), "one node is marked as the master's");
    assertTrue(chromium.driver.findElement(By.cssSelector("#nodes tr[data-node='n1']")).getText().contains("master"),
        "the master runs on n1, the oldest node");
    assertTrue(chromium.driver.findElement(By.id("card-tablets")).getText().contains(String.valueOf(10 + SEQ_TABLETS)));
  }

  private static void tablePages(Chromium chromium, String base) throws Exception {
    show(chromium, base + "#/tables", "tables");
    Map<String, Integer> tablets = new java.util.TreeMap<>();
    for (WebElement r : chromium.driver.findElements(By.cssSelector("#tables tr.table-row"))) {
      tablets.put(r.getAttribute("data-table"), Integer.parseInt(r.findElement(By.cssSelector("td.tablets")).getText()
          .trim()));
    }
    assertEquals(Map.of("hot", 10, "seq", SEQ_TABLETS), tablets, "the tables page shows each table's tablets");
    chromium.driver.findElement(By.linkText("hot")).click();
    waitLoaded(chromium, "#/table/hot");
    shot(chromium, "table-hot");
    List<WebElement> rows = chromium.driver.findElements(By.cssSelector("#tablets tr.tablet"));
    assertEquals(10, rows.size(), "the table page lists its ten tablets");
    Set<String> owners = new TreeSet<>();
    rows.forEach(r -> owners.add(r.findElement(By.cssSelector("td.owner")).getText()));
    assertEquals(Set.of("n1", "n2"), owners, "the tablets are served by both nodes");
  }

  private static void hotKeyViz(Chromium chromium, String base) throws Exception {
    show(chromium, base + "#/keyviz/hot", "keyviz-hot");
    for (String metric : List.of("writes", "bytesWritten")) {
      new Select(chromium.driver.findElement(By.id("kv-metric"))).selectByValue(metric);
      List<List<Long>> cells = brightness(chromium);
      int bands = cells.get(0).size();
      assertEquals(10, bands, "one band per tablet of the table");
      long[] total = new long[bands];
      cells.forEach(col -> {
        for (int b = 0; b < bands; b++) {
          total[b] += col.get(b);
        }
      });
      int hottest = 0;
      for (int b = 1; b < bands; b++) {
        if (total[b] > total[hottest]) {
          hottest = b;
        }
      }
      assertEquals("\"c\"", bandStart(chromium, hottest), "the brightest band (by " + metric + ") is the one of the "
          + "rows starting with c: " + java.util.Arrays.toString(total));
      if (metric.equals("writes")) {
        WebElement canvas = chromium.driver.findElement(By.id("heatmap"));
        int cellW = Integer.parseInt(canvas.getAttribute("data-cell-width"));
        int cellH = Integer.parseInt(canvas.getAttribute("data-cell-height"));
        int cols = cells.size();
        // Selenium's offsets are from the element's centre.
        new Actions(chromium.driver).moveToElement(canvas, (cols - 3) * cellW + cellW / 2 - canvas.getSize().width / 2,
            hottest * cellH + cellH / 2 - canvas.getSize().height / 2).perform();
        WebElement hover = chromium.driver.findElement(By.id("hover"));
        new WebDriverWait(chromium.driver, Duration.ofSeconds(5)).until(d -> hover.isDisplayed());
        assertTrue(hover.getText().contains("\"c\"") && hover.getText().contains("tablet hot-"),
            "hovering the hot band names its keys and tablet: " + hover.getText());
        shot(chromium, "keyviz-hot-hover");
      }
    }
  }

  private static void sequentialKeyViz(Chromium chromium, String base) throws Exception {
    show(chromium, base + "#/keyviz/seq", "keyviz-seq");
    List<List<Long>> cells = brightness(chromium);
    List<Integer> brightest = new ArrayList<>();
    for (List<Long> col : cells) {
      int best = 0;
      for (int b = 1; b < col.size(); b++) {
        if (col.get(b) > col.get(best)) {
          best = b;
        }
      }
      if (col.get(best) > 3 * 20) { // darker than about rgb(20, 20, 20): no load in that column
        brightest.add(best);
      }
    }
    // A tablet's last report can land in the column after the writer left it, so a column may show the band
    // just before; anything else going back up the keys is not the diagonal.
    int back = 0;
    for (int i = 1; i < brightest.size(); i++) {
      int step = brightest.get(i) - brightest.get(i - 1);
      assertTrue(step >= -1, "the brightest band of each column moves down the keys as time goes on: " + brightest);
      back += step < 0 ? 1 : 0;
    }
    assertTrue(back <= 2, "the brightest band moves down the keys, back by one band at most twice: " + brightest);
    assertTrue(new TreeSet<>(brightest).size() >= SEQ_TABLETS - 2, "the diagonal crosses most of the table's tablets: "
        + brightest);
  }

  /** The summed red, green and blue of the heatmap's cell at each column (outer list) and band. */
  @SuppressWarnings("unchecked")
  private static List<List<Long>> brightness(Chromium chromium) {
    return (List<List<Long>>) chromium.driver.executeScript(
        "var c = document.getElementById('heatmap');"
        + "var w = +c.dataset.cellWidth, h = +c.dataset.cellHeight, B = +c.dataset.bands, C = +c.dataset.columns;"
        + "var d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data; var out = [];"
        + "for (var col = 0; col < C; col++) { var row = [];"
        + "  for (var b = 0; b < B; b++) { var p = ((b * h + (h >> 1)) * c.width + col * w + (w >> 1)) * 4;"
        + "    row.push(d[p] + d[p + 1] + d[p + 2]); }"
        + "  out.push(row); }"
        + "return out;");
  }

  private static String bandStart(Chromium chromium, int band) {
    return (String) chromium.driver.executeScript("return window.tabulaKeyViz.bands[arguments[0]].start;", band);
  }

  private static void show(Chromium chromium, String url, String name) throws Exception {
    chromium.driver.get(url);
    waitLoaded(chromium, url.substring(url.indexOf('#')));
    shot(chromium, name);
  }

  private static void waitLoaded(Chromium chromium, String hash) {
    new WebDriverWait(chromium.driver, Duration.ofSeconds(20)).until(d -> hash.equals(
        d.findElement(By.tagName("body")).getAttribute("data-loaded")));
  }

  private static void shot(Chromium chromium, String name) throws Exception {
    Path file = SHOTS.resolve(name + ".png");
    chromium.screenshot(file);
    System.out.println("console test: screenshot " + file.toAbsolutePath());
  }
}
