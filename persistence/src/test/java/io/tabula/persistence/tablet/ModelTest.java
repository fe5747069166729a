package io.tabula.persistence.tablet;

import static org.junit.jupiter.api.Assertions.fail;

import io.tabula.persistence.encoding.ByteArrays;
import io.tabula.persistence.model.Mutation;
import io.tabula.persistence.model.Row;
import io.tabula.persistence.model.RowMutation;
import io.tabula.persistence.read.ReadFilter;
import io.tabula.persistence.schema.ColumnFamily;
import io.tabula.persistence.schema.GcPolicy;
import io.tabula.persistence.schema.LocalityGroup;
import io.tabula.persistence.schema.TableSchema;
import io.tabula.persistence.sstable.Compression;
import io.tabula.persistence.storage.FaultyStorage;
import io.tabula.persistence.storage.FileStorage;
import io.tabula.persistence.storage.Storage;
import io.tabula.persistence.wal.CommitLogOptions;
import io.tabula.persistence.wal.Durability;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The randomized model test: thousands of random mutations, reads and scans against a
 * {@link TabletServer}, with flushes, compactions, splits, clean reopens and crashes
 * (torn log tails) at random points, each result compared with {@link Model}.
 *
 * <p>GC makes a Bigtable read a range, not a point: a version that was collectable at
 * some moment may already be gone, or (if a later delete made it young again) still be
 * there. So each read must return at least the model's cells that were never collectable
 * and at most the model's cells visible now. Replay a failure with -Dtabula.seed=N.
 */
class ModelTest {
  private static final String TABLE = "model";
  private static final TableSchema SCHEMA = TableSchema.of(List.of(
      ColumnFamily.of("a"),
      new ColumnFamily("b", GcPolicy.maxVersions(2), "lg2"),
      new ColumnFamily("c", GcPolicy.maxAgeMicros(50_000), LocalityGroup.DEFAULT_NAME),
      new ColumnFamily("d", GcPolicy.union(GcPolicy.maxVersions(1), GcPolicy.maxAgeMicros(80_000)), "lg2"),
      new ColumnFamily("e", GcPolicy.intersection(GcPolicy.maxVersions(1), GcPolicy.maxAgeMicros(30_000)), "mem")),
      List.of(new LocalityGroup("lg2", 512, Compression.LZ4, 10, false),
          new LocalityGroup("mem", 256, Compression.ZSTD, 0, true)));
  private static final String[] FAMILIES = {"a", "b", "c", "d", "e"};

  @TempDir
  Path dir;

  private final AtomicLong now = new AtomicLong(1_000_000_000L);
  private FaultyStorage storage;
  private TabletServer server;
  private int nextTabletId;
  /** What the run did, for the failure message. */
  private final List<String> history = new ArrayList<>();
  private int crashes;
  private int tornTails;
  private int unackedSurvivors;

  /** The storage the run starts on. */
  Storage openDisk() throws IOException {
    return new FileStorage(dir);
  }

  /** How many steps a run takes unless -Dtabula.model.steps says otherwise. */
  int defaultSteps() {
    return 12000;
  }

  /** The crash: the power goes, and each file keeps its synced bytes and maybe some more. */
  void cutPower(Random rnd) throws IOException {
    storage.crash(rnd);
  }

  /** The storage the next life of the process sees after {@link #cutPower}. */
  Storage reopenDiskAfterCrash() throws IOException {
    return new FileStorage(dir);
  }

  /** The storage the engine uses now, with its fault injection. */
  FaultyStorage storage() {
    return storage;
  }

  @Test
  void engineMatchesModel() throws Exception {
    long seed = Long.getLong("tabula.seed", System.nanoTime());
    System.out.println(getClass().getSimpleName() + " seed " + seed);
    try {
      run(new Random(seed), Integer.getInteger("tabula.model.steps", defaultSteps()));
    } catch (AssertionError | Exception e) {
      history.add("raw entries of the failing rows:\n" + dumpAll());
      String last = String.join("\n  ", history.subList(Math.max(0, history.size() - 60), history.size()));
      throw new AssertionError(getClass().getSimpleName() + " failed with seed " + seed + ": " + e + "\nlast steps:\n  " + last, e);
    } finally {
      if (server != null) {
        server.abandon();
      }
    }
  }

  private void run(Random rnd, int steps) throws Exception {
    storage = new FaultyStorage(openDisk());
    openServer();
    server.createTablet(TABLE, "t" + nextTabletId++, new byte[0], new byte[0]);
    Model model = new Model(SCHEMA);
    for (int step = 0; step < steps; step++) {
      int op = rnd.nextInt(1000);
      if (op < 550) {
        RowMutation rm = randomMutation(rnd);
        tabletFor(rm.row()).apply(rm).join();
        model.apply(rm, now.get());
        history.add(step + " now=" + now.get() + " " + ByteArrays.show(rm.row()) + " " + rm.mutations());
      } else if (op < 700) {
        byte[] row = randomRow(rnd);
        ReadFilter f = randomFilter(rnd);
        Optional<Row> got = tabletFor(row).read(row, f);
        model.check(row, got.map(List::of).orElse(List.of()), f, now.get(), row, successor(row));
      } else if (op < 780) {
        byte[] a = randomRow(rnd);
        byte[] b = randomRow(rnd);
        if (ByteArrays.compare(a, b) > 0) {
          byte[] t = a;
          a = b;
          b = t;
        }
        if (rnd.nextInt(4) == 0) {
          b = new byte[0];
        }
        ReadFilter f = randomFilter(rnd);
        model.check(null, scan(a, b, f), f, now.get(), a, b);
      } else if (op < 830) {
        now.addAndGet(rnd.nextInt(20_000));
        history.add(step + " clock " + now.get());
        model.markCollectable(now.get());
      } else if (op < 860) {
        Tablet t = pick(rnd);
        t.freezeAndFlush().join();
        history.add(step + " flush " + t.id() + " " + t.files());
      } else if (op < 875) {
        Tablet t = pick(rnd);
        t.majorCompact().join();
        history.add(step + " major " + t.id() + " " + t.files());
      } else if (op < 885) {
        split(rnd);
      } else if (op < 895) {
        server.close();
        openServer();
      } else if (op < 905) {
        crash(rnd, model);
      }
      model.markCollectable(now.get());
    }
    model.check(null, scan(new byte[0], new byte[0], ReadFilter.all()), ReadFilter.all(), now.get(), new byte[0],
        new byte[0]);
    System.out.println(getClass().getSimpleName() + ": " + steps + " steps, " + crashes + " crashes, " + tornTails
        + " torn log tails, " + unackedSurvivors + " unacknowledged writes found after a crash");
  }

  /** Every stored entry of rows the history mentions last, per source: for failure messages. */
  private String dumpAll() {
    StringBuilder sb = new StringBuilder();
    try {
      for (Tablet t : server.tablets()) {
        TabletVersion v = t.acquire();
        try {
          List<io.tabula.persistence.iterator.CellIterator> its = new ArrayList<>();
          List<String> names = new ArrayList<>();
          its.add(v.active.iterator());
          names.add("active");
          for (TabletVersion.Frozen f : v.frozen) {
            its.add(f.memtable().iterator());
            names.add("frozen");
          }
          v.files.forEach((g, hs) -> hs.forEach(h -> {
            its.add(h.reader().iterator());
            names.add(g + ":" + h.path());
          }));
          for (int i = 0; i < its.size(); i++) {
            io.tabula.persistence.iterator.CellIterator it = its.get(i);
            for (it.seekToFirst(); it.valid(); it.next()) {
              if (t.containsRow(it.key().row()) && dumpRows.contains(ByteArrays.show(it.key().row()))) {
                sb.append("    ").append(t.id()).append(' ').append(names.get(i)).append(' ').append(it.key())
                    .append('\n');
              }
            }
          }
        } finally {
          v.release();
        }
      }
    } catch (IOException | RuntimeException e) {
      sb.append(e);
    }
    return sb.toString();
  }

  /** Rows to show raw in a failure message. */
  static final java.util.Set<String> dumpRows = new java.util.HashSet<>(List.of(System.getProperty("tabula.dump", "")
      .split(",")));

  private void openServer() throws IOException {
    TabletServer.Options o = new TabletServer.Options("node-1", 1 << 20, 2,
        new CommitLogOptions(16 * 1024, Durability.FSYNC),
        TabletOptions.defaults().withMemtableBytes(8 * 1024).withMaxFilesPerGroup(3))
        // A scan cache small enough to evict: point reads take rows from it and from the files.
        .withScanCache(32 * 1024);
    server = TabletServer.open(storage, o, now::get, t -> SCHEMA);
  }

  /**
   * Writes a few mutations without waiting for them, then cuts the power. Acknowledged
   * writes must all be there; of the unacknowledged ones, a prefix (in log order) may be.
   */
  private void crash(Random rnd, Model model) throws Exception {
    List<RowMutation> pending = new ArrayList<>();
    List<CompletableFuture<Void>> futures = new ArrayList<>();
    int n = rnd.nextInt(6);
    boolean stall = rnd.nextBoolean();
    storage.stallSyncs(stall);
    for (int i = 0; i < n; i++) {
      RowMutation rm = randomMutation(rnd);
      pending.add(rm);
      futures.add(tabletFor(rm.row()).apply(rm));
    }
    if (stall) {
      Thread.sleep(5); // let the log writer put the batch in the file; its fsync waits for the crash
    }
    cutPower(rnd);
    server.abandon();
    storage = new FaultyStorage(reopenDiskAfterCrash());
    int acked = 0;
    while (acked < futures.size() && futures.get(acked).isDone() && !futures.get(acked).isCompletedExceptionally()) {
      acked++;
    }
    openServer();
    List<Row> after = scan(new byte[0], new byte[0], ReadFilter.all());
    for (int k = acked; k <= pending.size(); k++) {
      Model candidate = model.copy();
      for (int i = 0; i < k; i++) {
        candidate.apply(pending.get(i), now.get());
      }
      candidate.markCollectable(now.get());
      if (candidate.matches(after, ReadFilter.all(), now.get(), new byte[0], new byte[0])) {
        model.replaceWith(candidate);
        crashes++;
        tornTails += server.recovery().clean() ? 0 : 1;
        unackedSurvivors += k - acked;
        history.add("crash: " + acked + " of " + pending.size() + " acknowledged, " + k + " survived; "
            + server.recovery());
        return;
      }
    }
    fail("after a crash the tablets hold no prefix of the " + pending.size() + " unacknowledged writes that keeps the "
        + acked + " acknowledged ones; recovery: " + server.recovery());
  }

  private void split(Random rnd) throws IOException {
    Tablet t = pick(rnd);
    byte[] at = randomRow(rnd);
    if (!t.containsRow(at) || ByteArrays.compare(at, t.startRow()) == 0) {
      return;
    }
    server.split(t.id(), at, "t" + nextTabletId++, "t" + nextTabletId++);
  }

  private Tablet pick(Random rnd) {
    List<Tablet> all = server.tablets();
    return all.get(rnd.nextInt(all.size()));
  }

  private Tablet tabletFor(byte[] row) {
    for (Tablet t : server.tablets()) {
      if (t.containsRow(row)) {
        return t;
      }
    }
    throw new AssertionError("no tablet holds row " + ByteArrays.show(row));
  }

  private List<Row> scan(byte[] start, byte[] end, ReadFilter f) throws IOException {
    List<Tablet> ts = new ArrayList<>(server.tablets());
    ts.sort((x, y) -> ByteArrays.compare(x.startRow(), y.startRow()));
    List<Row> out = new ArrayList<>();
    for (Tablet t : ts) {
      try (RowScanner s = t.scan(start, end, f)) {
        for (Row r = s.next(); r != null; r = s.next()) {
          out.add(r);
        }
      }
    }
    return out;
  }

  private static byte[] successor(byte[] row) {
    return java.util.Arrays.copyOf(row, row.length + 1);
  }

  private static byte[] randomRow(Random rnd) {
    return String.format("r%02d", rnd.nextInt(40)).getBytes(StandardCharsets.UTF_8);
  }

  private static byte[] qualifier(Random rnd) {
    return rnd.nextInt(10) == 0 ? new byte[0] : new byte[] {'q', (byte) ('0' + rnd.nextInt(4))};
  }

  private RowMutation randomMutation(Random rnd) {
    int n = 1 + rnd.nextInt(4);
    List<Mutation> ms = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      String fam = FAMILIES[rnd.nextInt(FAMILIES.length)];
      int k = rnd.nextInt(100);
      if (k < 70) {
        long ts = rnd.nextInt(8) == 0 ? Mutation.SERVER_TIME : now.get() - rnd.nextInt(100_000) / 1000 * 1000;
        byte[] value = new byte[rnd.nextInt(5) == 0 ? rnd.nextInt(700) : rnd.nextInt(12)];
        rnd.nextBytes(value);
        ms.add(new Mutation.SetCell(fam, qualifier(rnd), ts, value));
      } else if (k < 82) {
        if (rnd.nextBoolean()) {
          ms.add(Mutation.DeleteFromColumn.allVersions(fam, qualifier(rnd)));
        } else {
          long a = now.get() - rnd.nextInt(100_000);
          ms.add(new Mutation.DeleteFromColumn(fam, qualifier(rnd), a, a + 1 + rnd.nextInt(60_000)));
        }
      } else if (k < 92) {
        ms.add(new Mutation.DeleteFromFamily(fam));
      } else {
        ms.add(Mutation.DeleteFromRow.INSTANCE);
      }
    }
    return new RowMutation(randomRow(rnd), ms);
  }

  private ReadFilter randomFilter(Random rnd) {
    ReadFilter f = ReadFilter.all();
    if (rnd.nextInt(4) == 0) {
      f = f.withFamilies(new java.util.HashSet<>(List.of(FAMILIES[rnd.nextInt(FAMILIES.length)],
          FAMILIES[rnd.nextInt(FAMILIES.length)])));
    }
    if (rnd.nextInt(5) == 0) {
      long a = now.get() - rnd.nextInt(100_000);
      f = f.withTimestamps(a, a + 1 + rnd.nextInt(100_000));
    }
    if (rnd.nextInt(5) == 0) {
      f = f.withMaxVersions(1 + rnd.nextInt(3));
    }
    if (rnd.nextInt(6) == 0) {
      byte q = (byte) ('0' + rnd.nextInt(4));
      f = f.withColumn((fam, qual) -> qual.length == 2 && qual[1] == q);
    }
    return f;
  }
}
