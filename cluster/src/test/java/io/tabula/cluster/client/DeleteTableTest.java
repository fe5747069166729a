package io.tabula.cluster.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.grpc.Status;
import io.tabula.client.Query;
import io.tabula.client.RowMutation;
import io.tabula.client.TabulaException;
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
 * Deleting a table retires its tablets; its files go later, with the master's sweep (here every
 * second with a second's grace), the only deleter of table files: nothing of the node fails on
 * the missing files afterwards (tablet actors that kept ticking over deleted files used to
 * crash), requests for the table are NOT_FOUND, and a table of the same name starts empty.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class DeleteTableTest {
  @TempDir
  Path dir;

  @Test
  void aDeletedTablesTabletsRetireAndTheMastersSweepDeletesItsFiles() throws Exception {
    ListAppender<ILoggingEvent> log = new ListAppender<>();
    log.start();
    Logger root = (Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
    root.addAppender(log);
    try (InJvmNode node = InJvmNode.start(dir, io.tabula.client.RetrySettings.DEFAULT,
        Map.of("tabula.tablet.check-interval", "100ms", "tabula.node.memtable-bytes", "4KiB",
            "tabula.master.sweep-files-every", "1s", "tabula.master.sweep-files-grace", "1s"))) {
      node.client.admin().createTable("t", "f").toCompletableFuture().join();
      for (int i = 0; i < 200; i++) {
        node.client.apply("t", RowMutation.create("row" + i).setCell("f", "q", "v".repeat(100)))
            .toCompletableFuture().join();
      }
      assertTrue(tableFiles().count() > 0, "flushed files exist before the delete");

      node.client.admin().deleteTable("t").toCompletableFuture().join();
      // Several check intervals and sweeps: a tablet still ticking over the deleted files would fail now.
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
      while (tableFiles().count() > 0 && System.nanoTime() < deadline) {
        Thread.sleep(200);
      }
      assertEquals(0, tableFiles().count(), "the master's sweep deleted the table's files");
      CompletionException e = assertThrows(CompletionException.class, () -> node.client.apply("t",
          RowMutation.create("row1").setCell("f", "q", "late")).toCompletableFuture().join());
      assertEquals(Status.Code.NOT_FOUND, assertInstanceOf(TabulaException.class, e.getCause()).code());

      node.client.admin().createTable("t", "f").toCompletableFuture().join();
      assertEquals(List.of(), node.client.readRows(Query.table("t")).toCompletableFuture().join(),
          "a table of the same name starts empty");
      node.client.apply("t", RowMutation.create("new").setCell("f", "q", "v")).toCompletableFuture().join();
      assertEquals(1, node.client.readRows(Query.table("t")).toCompletableFuture().join().size());
    } finally {
      root.detachAppender(log);
    }
    List<String> errors = log.list.stream().filter(ev -> ev.getLevel().isGreaterOrEqual(Level.ERROR))
        .map(ev -> ev.getLoggerName() + ": " + ev.getFormattedMessage()).toList();
    assertEquals(List.of(), errors, "nothing failed on the node");
  }

  private Stream<Path> tableFiles() throws java.io.IOException {
    Path tables = dir.resolve("tables").resolve("t");
    if (!Files.isDirectory(tables)) {
      return Stream.empty();
    }
    try (Stream<Path> files = Files.walk(tables)) {
      return files.filter(Files::isRegularFile).filter(p -> p.toString().endsWith(".sst")).toList().stream();
    }
  }
}
