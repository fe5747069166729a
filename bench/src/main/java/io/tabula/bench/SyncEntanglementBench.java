package io.tabula.bench;

import io.tabula.persistence.storage.FileStorage;
import io.tabula.persistence.storage.Storage;
import io.tabula.persistence.storage.SyncEvery;
import io.tabula.persistence.storage.WritableFile;
import io.tabula.persistence.wal.CommitLog;
import io.tabula.persistence.wal.CommitLogOptions;
import io.tabula.persistence.wal.Durability;
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
 * How long the commit log's writes wait while a flush writes a large SSTable in the same file
 * system: with the log's segments appended to (plain) or prepared (zero-filled ahead and
 * written over, {@code tabula.node.log-prepare-segments}), and the SSTable synced only at its
 * end or every so many bytes ({@link SyncEvery}, {@code tabula.node.sstable-sync-every}). One
 * thread appends 1 KiB records to the project's {@link CommitLog} and waits for each (a lone
 * write's group commit: one write, one fdatasync); another writes files of {@code --file-mib}
 * in 64 KiB appends through {@link FileStorage}, as a flush does. Reports the log writes' p50,
 * p99 and longest, and how long the big files took. A benchmark, never a test.
 */
@Command(name = "sync-entanglement", mixinStandardHelpOptions = true, sortOptions = false,
    description = "Commit-log write latency while a large file is written, for plain and prepared log segments.")
public final class SyncEntanglementBench implements Callable<Integer> {
  @Option(names = "--log", split = ",", description = "Log segments: plain (appended) or prepared; default: "
      + "${DEFAULT-VALUE}", defaultValue = "plain,prepared")
  List<String> logModes;

  @Option(names = "--dir", description = "Scratch folder, on the file system to measure; wiped; default: "
      + "${DEFAULT-VALUE}", defaultValue = "bench/target/sync-entanglement")
  Path dir;

  @Option(names = "--every-kib", split = ",", description = "Sync the big files every this many KiB; 0: only at"
      + " their end; default: ${DEFAULT-VALUE}", defaultValue = "0")
  List<Long> everyKib;

  @Option(names = "--file-mib", description = "Size of each big file; default: ${DEFAULT-VALUE}",
      defaultValue = "64")
  int fileMib;

  @Option(names = "--files", description = "Big files written one after another per run; default: "
      + "${DEFAULT-VALUE}", defaultValue = "3")
  int files;

  @Option(names = "--alone", description = "Log writes timed first, with no big file being written; default: "
      + "${DEFAULT-VALUE}", defaultValue = "2000")
  int alone;

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
    for (String mode : logModes) {
      if (!mode.equals("plain") && !mode.equals("prepared")) {
        throw new CommandLine.ParameterException(new CommandLine(this), "--log takes plain or prepared, was " + mode);
      }
    }
    for (int r = 1; r <= rounds; r++) {
      for (String mode : logModes) {
        for (long kib : everyKib) {
          wipe();
          Files.createDirectories(dir);
          String row = run(new FileStorage(dir), mode.equals("prepared"), kib * 1024);
          String synced = kib == 0 ? "at the end" : kib + " KiB";
          System.out.println("round " + r + ", log " + mode + ", big files synced: " + synced + ": " + row);
          rows.add("| " + r + " | " + mode + " | " + synced + " | " + row + " |");
        }
      }
    }
    wipe();
    List<String> md = new ArrayList<>(List.of(
        "# Commit-log writes while a large file is written",
        "",
        "Command: `bench/run-sync-entanglement" + args() + "`. One thread appends 1 KiB records to the commit log"
            + " (CommitLog, fsync durability, 64 MiB segments, plain or prepared as the second column says) and waits"
            + " for each: one write and one fdatasync each. Meanwhile another writes " + files + " files of " + fileMib
            + " MiB one after another in 64 KiB appends (FileStorage), synced as the third column says and at their"
            + " ends. Java " + System.getProperty("java.version") + ", " + Runtime.getRuntime().availableProcessors()
            + " cores.",
        "",
        "| round | log segments | big files synced | alone: p50 ms | log writes | p50 ms | p99 ms | longest ms |"
            + " over 20 ms | ms in those | big files written in ms |",
        "|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"));
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
  /** The p50 of the last run's log writes with no big file being written, in ms. */
  private double quietP50;

  private String run(Storage storage, boolean prepared, long everyBytes) throws Exception {
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
    try (CommitLog log = CommitLog.open(storage, "log", new CommitLogOptions(64L << 20, Durability.FSYNC, prepared))) {
      byte[] record = new byte[1024];
      long seq = 0;
      if (prepared && !log.awaitPreparedSegment(60_000)) {
        throw new IllegalStateException("no prepared segment within a minute");
      }
      log.append("t", seq++, record).join(); // the first segment; a prepared log then makes its next one
      if (prepared && !log.awaitPreparedSegment(60_000)) {
        throw new IllegalStateException("no second prepared segment within a minute");
      }
      long[] quiet = new long[alone];
      for (int i = 0; i < alone; i++) {
        long s = System.nanoTime();
        log.append("t", seq++, record).join();
        quiet[i] = System.nanoTime() - s;
      }
      Arrays.sort(quiet);
      quietP50 = alone == 0 ? Double.NaN : quiet[alone / 2] / 1e6;
      big.start();
      while (!done.get()) {
        long s = System.nanoTime();
        log.append("t", seq++, record).join();
        syncs.add(System.nanoTime() - s);
      }
      big.join();
    }
    if (failed.get() != null) {
      throw failed.get();
    }
    long[] t = syncs.stream().mapToLong(Long::longValue).toArray();
    Arrays.sort(t);
    long slow = Arrays.stream(t).filter(n -> n > 20_000_000).count();
    long slowNanos = Arrays.stream(t).filter(n -> n > 20_000_000).sum();
    return String.format(Locale.ROOT, "%.3f | %d | %.2f | %.2f | %.1f | %d | %d | %d", quietP50, t.length,
        t[t.length / 2] / 1e6,
        t[(int) (t.length * 0.99)] / 1e6, t[t.length - 1] / 1e6, slow, slowNanos / 1_000_000, bigNanos[0] / 1_000_000);
  }
}
