package io.tabula.bench;

import io.tabula.persistence.storage.FileStorage;
import io.tabula.persistence.storage.Storage;
import io.tabula.persistence.storage.SyncEvery;
import io.tabula.persistence.storage.WritableFile;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * How long a commit log's syncs wait while a flush writes a large SSTable in the same file
 * system, with the SSTable synced only at its end or every so many bytes
 * ({@link SyncEvery}, {@code tabula.node.sstable-sync-every}). One thread appends 1 KiB
 * records and syncs each (a lone write's group commit); another writes files of
 * {@code --file-mib} in 64 KiB appends through the project's {@link FileStorage}, as a flush
 * does. Reports the log syncs' p50, p99 and longest, and how long the big files took. A
 * benchmark, never a test.
 */
@Command(name = "sync-entanglement", mixinStandardHelpOptions = true, sortOptions = false,
    description = "Commit-log sync latency while a large file is written, synced at its end or as it goes.")
public final class SyncEntanglementBench implements Callable<Integer> {
  @Option(names = "--dir", description = "Scratch folder, on the file system to measure; wiped; default: "
      + "${DEFAULT-VALUE}", defaultValue = "bench/target/sync-entanglement")
  Path dir;

  @Option(names = "--every-kib", split = ",", description = "Sync the big files every this many KiB; 0: only at"
      + " their end; default: ${DEFAULT-VALUE}", defaultValue = "0,1024,4096")
  List<Long> everyKib;

  @Option(names = "--file-mib", description = "Size of each big file; default: ${DEFAULT-VALUE}",
      defaultValue = "64")
  int fileMib;

  @Option(names = "--files", description = "Big files written one after another per run; default: "
      + "${DEFAULT-VALUE}", defaultValue = "3")
  int files;

  @Option(names = "--rounds", description = "Runs of each setting, taken in turns; default: ${DEFAULT-VALUE}",
      defaultValue = "2")
  int rounds;

  @Option(names = "--out", description = "Markdown report; default: ${DEFAULT-VALUE}",
      defaultValue = "bench/results/sync-entanglement.md")
  Path out;

  public static void main(String[] args) {
    System.exit(new CommandLine(new SyncEntanglementBench()).execute(args));
  }

  @Override
  public Integer call() throws Exception {
    List<String> rows = new ArrayList<>();
    for (int r = 1; r <= rounds; r++) {
      for (long kib : everyKib) {
        wipe();
        Files.createDirectories(dir);
        String row = run(new FileStorage(dir), kib * 1024);
        String synced = kib == 0 ? "at the end" : kib + " KiB";
        System.out.println("round " + r + ", big files synced: " + synced + ": " + row);
        rows.add("| " + r + " | " + synced + " | " + row + " |");
      }
    }
    wipe();
    List<String> md = new ArrayList<>(List.of(
        "# Commit-log syncs while a large file is written",
        "",
        "Command: `bench/run-sync-entanglement" + args() + "`. One thread appends 1 KiB records to a log file and syncs"
            + " each; meanwhile another writes " + files + " files of " + fileMib + " MiB one after another in 64 KiB"
            + " appends (FileStorage), synced as the second column says and at their ends. Java "
            + System.getProperty("java.version") + ", " + Runtime.getRuntime().availableProcessors() + " cores.",
        "",
        "| round | big files synced | log syncs | p50 ms | p99 ms | longest ms | big files written in ms |",
        "|---:|---|---:|---:|---:|---:|---:|"));
    md.addAll(rows);
    Files.createDirectories(out.toAbsolutePath().getParent());
    Files.write(out, md);
    System.out.println("wrote " + out);
    return 0;
  }

  /** The options the script was given, after a space; empty without any. */
  private static String args() {
    String a = System.getenv("BENCH_ARGS");
    return a == null || a.isBlank() ? "" : " " + a.trim();
  }

  private void wipe() throws IOException {
    if (Files.exists(dir)) {
      DataDirectory.deleteTree(dir);
    }
  }

  /** One run; the table cells after the setting: syncs, p50, p99, longest, big files' time. */
  private String run(Storage storage, long everyBytes) throws Exception {
    AtomicBoolean done = new AtomicBoolean();
    AtomicReference<Exception> failed = new AtomicReference<>();
    long[] bigNanos = new long[1];
    Thread big = new Thread(() -> {
      long start = System.nanoTime();
      byte[] chunk = new byte[64 * 1024];
      try {
        for (int f = 0; f < files; f++) {
          try (WritableFile w = SyncEvery.wrap(storage.createNew("big-" + f + ".sst"), everyBytes)) {
            for (long written = 0; written < (long) fileMib << 20; written += chunk.length) {
              w.append(chunk);
            }
            w.sync();
          }
        }
      } catch (IOException e) {
        failed.set(e);
      } finally {
        bigNanos[0] = System.nanoTime() - start;
        done.set(true);
      }
    }, "big-file-writer");
    List<Long> syncs = new ArrayList<>();
    try (WritableFile log = storage.createNew("000001.log")) {
      byte[] record = new byte[1024];
      big.start();
      while (!done.get()) {
        long s = System.nanoTime();
        log.append(record);
        log.sync();
        syncs.add(System.nanoTime() - s);
      }
      big.join();
    }
    if (failed.get() != null) {
      throw failed.get();
    }
    long[] t = syncs.stream().mapToLong(Long::longValue).toArray();
    Arrays.sort(t);
    return String.format(Locale.ROOT, "%d | %.2f | %.2f | %.1f | %d", t.length, t[t.length / 2] / 1e6,
        t[(int) (t.length * 0.99)] / 1e6, t[t.length - 1] / 1e6, bigNanos[0] / 1_000_000);
  }
}
