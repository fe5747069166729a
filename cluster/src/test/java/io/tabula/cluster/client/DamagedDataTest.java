package io.tabula.cluster.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.grpc.Status;
import io.tabula.client.Query;
import io.tabula.client.RetrySettings;
import io.tabula.client.RowMutation;
import io.tabula.client.TabulaException;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.LoggerFactory;

/**
 * One flipped byte in an SSTable: reads that need the damaged block answer DATA_LOSS with a
 * message that names the file and offset and no Java class, the node logs the damage at
 * ERROR once for the file however often it is read, and rows elsewhere still read.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class DamagedDataTest {
  @TempDir
  Path dir;

  @Test
  void damagedDataIsDataLossLoggedOncePerFile() throws Exception {
    Map<String, Object> settings = Map.of("tabula.node.memtable-bytes", "4KiB");
    try (InJvmNode node = InJvmNode.start(dir, RetrySettings.DEFAULT, settings)) {
      node.client.admin().createTable("t", "f").toCompletableFuture().join();
      for (int i = 0; i < 100; i++) {
        node.client.apply("t", RowMutation.create(String.format("row%03d", i)).setCell("f", "q", "v".repeat(200)))
            .toCompletableFuture().join();
      }
    }
    Path sst = sstables().get(0);
    try (RandomAccessFile f = new RandomAccessFile(sst.toFile(), "rw")) {
      f.seek(30);
      int b = f.read();
      f.seek(30);
      f.write(b ^ 0x10);
    }

    ListAppender<ILoggingEvent> log = new ListAppender<>();
    log.start();
    Logger root = (Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
    root.addAppender(log);
    try (InJvmNode node = InJvmNode.start(dir, RetrySettings.DEFAULT, settings)) {
      for (int attempt = 0; attempt < 3; attempt++) {
        CompletionException e = assertThrows(CompletionException.class,
            () -> node.client.readRows(Query.table("t")).toCompletableFuture().join());
        TabulaException t = assertInstanceOf(TabulaException.class, e.getCause());
        assertEquals(Status.Code.DATA_LOSS, t.code(), t.getMessage());
        assertTrue(t.getMessage().contains("stored data is damaged") && t.getMessage().contains("at offset"),
            t.getMessage());
        assertFalse(t.getMessage().contains("Exception") || t.getMessage().contains("io.tabula"),
            "no Java class names: " + t.getMessage());
      }
      String file = dir.relativize(sst).toString();
      List<String> damageLines = log.list.stream().filter(ev -> ev.getLevel() == Level.ERROR)
          .map(ILoggingEvent::getFormattedMessage).filter(m -> m.contains(file)).toList();
      assertEquals(1, damageLines.size(), "the damage is logged once, naming the file: " + damageLines);
      assertTrue(damageLines.get(0).contains("offset"), damageLines.get(0));
      // The newest rows are still in the log and memtable, not in the damaged file: they read.
      node.client.apply("t", RowMutation.create("fresh").setCell("f", "q", "v")).toCompletableFuture().join();
      assertTrue(node.client.readRow("t", "fresh").toCompletableFuture().join().isPresent());
    } finally {
      root.detachAppender(log);
    }
  }

  private List<Path> sstables() throws java.io.IOException {
    try (Stream<Path> files = Files.walk(dir.resolve("tables"))) {
      return files.filter(p -> p.toString().endsWith(".sst")).sorted().toList();
    }
  }
}
