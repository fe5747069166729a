package io.tabula.actors.master;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.apache.pekko.actor.Address;
import org.apache.pekko.cluster.MemberStatus;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The master's directory and placement decisions at scale, in one JVM, without a master actor
 * or a journal (an actor system only for the serialization of snapshots): the real {@link Directory}, {@link DirectoryEvents}, {@link Placements}
 * and {@link Balancer} (package-private, hence this package), driven by the events the master
 * would record, over fake nodes that are only names (opening is the {@code TabletsOpened}
 * events a node's reports would make). For each size it measures, on this thread's CPU clock
 * and the wall clock:
 *
 * <ul>
 *   <li>creating tables of 100,000 initial splits (the {@code TableCreated} and
 *       {@code TabletsAssigned} a {@code CreateTable} records, their placement dealt by
 *       {@link Placements#spread}), and recording every tablet opened, 1,000 per event;
 *   <li>heap per tablet: the live heap with the directory held, less without;
 *   <li>a snapshot of the directory, as the master's snapshot store writes it (Pekko's
 *       serialization, Kryo): its size, and how long it takes to write and to read back;
 *   <li>a node's death: from the tick that finds it downed to its tablets' new placements
 *       recorded (two ticks: the first starts its fence, which completes at once here);
 *   <li>a join: one balancing decision with the new node (how many moves, how long).
 * </ul>
 *
 * Nodes are sized so each owns 2,000 tablets: a dead node's tablets are the same count at
 * every size, and the growth shows what the rest of the directory costs. Run by
 * {@code bench/run-directory}; never part of the tests.
 */
public final class DirectoryBench {
  private static final Logger LOG = LoggerFactory.getLogger(DirectoryBench.class);
  private static final int PER_TABLE = 100_000;
  private static final int PER_NODE = 2_000;
  private static final ThreadMXBean CPU = ManagementFactory.getThreadMXBean();

  private DirectoryBench() {}

  /** The cluster as the master sees it: names, all Up, one downed when told. */
  private static final class FakeNodes implements MasterNodes {
    final List<ClusterNodes.NodeInfo> nodes = new ArrayList<>();
    final Set<String> gone = new TreeSet<>();

    FakeNodes(int n) {
      for (int i = 0; i < n; i++) {
        add("n" + i);
      }
    }

    void add(String name) {
      nodes.add(new ClusterNodes.NodeInfo(name, new Address("pekko", "tabula", "10.0.0." + nodes.size(), 2552),
          nodes.size() + 1, "", "", name + ".log", MemberStatus.up(), true));
    }

    void kill(String name) {
      nodes.removeIf(n -> n.name().equals(name));
      gone.add(name);
    }

    @Override
    public List<ClusterNodes.NodeInfo> all() {
      return List.copyOf(nodes);
    }

    @Override
    public Set<String> gone() {
      return Set.copyOf(gone);
    }
  }

  /** One size's figures. */
  record Row(int tablets, int nodes, double createMs, double createCpuMs, double openMs, double bytesPerTablet,
      double snapshotMb, double snapshotWriteMs, double snapshotReadMs, double deathMs, double deathCpuMs, int placed,
      double balanceMs, int moves, double lookupUs, int lookupBytes) {}

  /** The serialization the master's snapshots go through; set by {@link #main}. */
  private static org.apache.pekko.serialization.Serialization serialization;

  public static void main(String[] args) throws Exception {
    List<Integer> sizes = new ArrayList<>();
    Path out = Path.of("bench/results/directory.md");
    for (int i = 0; i < args.length; i++) {
      if (args[i].equals("--sizes")) {
        for (String s : args[++i].split(",")) {
          sizes.add(Integer.parseInt(s.replace("_", "")));
        }
      } else if (args[i].equals("--out")) {
        out = Path.of(args[++i]);
      } else {
        throw new IllegalArgumentException("unknown option " + args[i] + " (options: --sizes 10000,100000 --out FILE)");
      }
    }
    if (sizes.isEmpty()) {
      sizes.addAll(List.of(10_000, 100_000, 1_000_000));
    }
    org.apache.pekko.actor.typed.ActorSystem<Void> system = org.apache.pekko.actor.typed.ActorSystem.create(
        org.apache.pekko.actor.typed.javadsl.Behaviors.empty(), "directory-bench");
    serialization = org.apache.pekko.serialization.SerializationExtension.get(
        org.apache.pekko.actor.typed.javadsl.Adapter.toClassic(system));
    run(sizes.get(0)); // warm-up: the JIT compiles the paths once
    List<Row> rows = new ArrayList<>();
    for (int n : sizes) {
      Row r = run(n);
      rows.add(r);
      LOG.info("{}", r);
    }
    String report = report(rows);
    System.out.print(report);
    Files.createDirectories(out.toAbsolutePath().getParent());
    Files.writeString(out, report);
    system.terminate();
  }

  private static Row run(int tablets) {
    int nodeCount = Math.max(2, tablets / PER_NODE);
    FakeNodes nodes = new FakeNodes(nodeCount);
    long[] clock = {0};
    Placements placements = new Placements(nodes, null, MasterSettings.DEFAULTS, () -> clock[0]);
    gc();
    long heapBefore = usedHeap();

    Directory d = Directory.EMPTY;
    long wall = System.nanoTime();
    long cpu = CPU.getCurrentThreadCpuTime();
    int tables = Math.max(1, tablets / PER_TABLE);
    for (int t = 0; t < tables; t++) {
      d = createTable(d, placements, "t" + t, Math.min(PER_TABLE, tablets) - 1);
    }
    double createMs = (System.nanoTime() - wall) / 1e6 / tables;
    double createCpuMs = (CPU.getCurrentThreadCpuTime() - cpu) / 1e6 / tables;

    wall = System.nanoTime();
    List<Master.TabletOpened> batch = new ArrayList<>();
    for (TabletInfo t : d.allTablets()) {
      String owner = d.ownerOf(t.id());
      batch.add(new Master.TabletOpened(t.id(), owner, owner + ".log", List.of()));
      if (batch.size() == TabletOpenings.BATCH) {
        d = DirectoryEvents.apply(d, new Master.TabletsOpened(List.copyOf(batch)));
        batch.clear();
      }
    }
    if (!batch.isEmpty()) {
      d = DirectoryEvents.apply(d, new Master.TabletsOpened(List.copyOf(batch)));
    }
    double openMs = (System.nanoTime() - wall) / 1e6;

    gc();
    double bytesPerTablet = (usedHeap() - heapBefore) / (double) d.tabletCount();

    wall = System.nanoTime();
    byte[] snapshot = serialization.serialize(d).get();
    double snapshotWriteMs = (System.nanoTime() - wall) / 1e6;
    wall = System.nanoTime();
    Object back = serialization.deserialize(snapshot, serialization.findSerializerFor(d).identifier(),
        d.getClass().getName()).get();
    double snapshotReadMs = (System.nanoTime() - wall) / 1e6;
    if (((Directory) back).tabletCount() != d.tabletCount()) {
      throw new IllegalStateException("the snapshot read back holds " + ((Directory) back).tabletCount() + " tablets");
    }
    back = null;

    Logger quiet = LoggerFactory.getLogger("directory-bench.master");
    placements.onTick(d, quiet); // the cluster as it is: nothing to place
    String victim = "n" + (nodeCount / 2);
    nodes.kill(victim);
    wall = System.nanoTime();
    cpu = CPU.getCurrentThreadCpuTime();
    clock[0] += 1_000_000_000L;
    int placed = 0;
    for (int tick = 0; tick < 3 && placed == 0; tick++) {
      Placements.Plan plan = placements.onTick(d, quiet);
      for (Master.Event e : plan.events()) {
        if (e instanceof Master.TabletsAssigned a) {
          placed += a.owners().size();
        }
        d = DirectoryEvents.apply(d, e);
      }
    }
    double deathMs = (System.nanoTime() - wall) / 1e6;
    double deathCpuMs = (CPU.getCurrentThreadCpuTime() - cpu) / 1e6;
    if (!d.tabletsOwnedBy(victim).isEmpty()) {
      throw new IllegalStateException(d.tabletsOwnedBy(victim).size() + " tablets of the dead node were not placed");
    }

    nodes.add("joined");
    List<String> targets = nodes.all().stream().map(ClusterNodes.NodeInfo::name).toList();
    wall = System.nanoTime();
    List<Balancer.Move> moves = Balancer.plan(d, targets, Map.of(), Set.of(), MasterSettings.DEFAULTS.maxMoves());
    double balanceMs = (System.nanoTime() - wall) / 1e6;

    // A node's lookup as the master answers it: the tablet of a random row and the 255 after it.
    java.util.Random random = new java.util.Random(7);
    int lookups = 20_000;
    int bytes = 0;
    cpu = CPU.getCurrentThreadCpuTime();
    for (int i = 0; i < lookups; i++) {
      String table = "t" + random.nextInt(tables);
      byte[] row = String.format("r%08d", random.nextInt(Math.min(PER_TABLE, tablets) * 10))
          .getBytes(java.nio.charset.StandardCharsets.UTF_8);
      TabletLookup.Located a = TabletLookup.answer(d, table, row, false, 256);
      if (a.tablets().isEmpty()) {
        throw new IllegalStateException("no tablet of " + table + " holds a row");
      }
      if (i == 0) {
        bytes = serialization.serialize(a).get().length;
      }
    }
    double lookupUs = (CPU.getCurrentThreadCpuTime() - cpu) / 1e3 / lookups;
    return new Row(d.tabletCount(), nodeCount, createMs, createCpuMs, openMs, bytesPerTablet,
        snapshot.length / 1e6, snapshotWriteMs, snapshotReadMs, deathMs, deathCpuMs, placed, balanceMs, moves.size(),
        lookupUs, bytes);
  }

  /** What the master records for a CreateTable of {@code splits} splits: the table, then its placements. */
  private static Directory createTable(Directory d, Placements placements, String name, int splits) {
    List<TabletInfo> tablets = new ArrayList<>(splits + 1);
    long n = d.nextTabletNumber();
    byte[] start = new byte[0];
    for (int i = 1; i <= splits; i++) {
      byte[] end = String.format("r%08d", i * 10).getBytes(java.nio.charset.StandardCharsets.UTF_8);
      tablets.add(TabletInfo.empty(name, name + "-" + n++, start, end));
      start = end;
    }
    tablets.add(TabletInfo.empty(name, name + "-" + n++, start, new byte[0]));
    d = DirectoryEvents.apply(d, new Master.TableCreated(new TableInfo(name, Map.of(), 0), tablets, n));
    Map<String, String> owners = placements.spread(d, tablets.stream().map(TabletInfo::id).toList());
    return DirectoryEvents.apply(d, new Master.TabletsAssigned(new HashMap<>(owners)));
  }

  private static void gc() {
    for (int i = 0; i < 3; i++) {
      System.gc();
    }
  }

  private static long usedHeap() {
    Runtime r = Runtime.getRuntime();
    return r.totalMemory() - r.freeMemory();
  }

  private static String report(List<Row> rows) {
    StringBuilder b = new StringBuilder();
    b.append("# The master's directory at scale (bench/run-directory)\n\n")
        .append("One JVM, the master's own directory and placement code, fake nodes of 2,000 tablets each; ")
        .append("java ").append(System.getProperty("java.version")).append(", ")
        .append(Runtime.getRuntime().availableProcessors()).append(" cores, max heap ")
        .append(Runtime.getRuntime().maxMemory() >> 20).append(" MiB.\n\n")
        .append("| tablets | nodes | create a table (of 100,000 tablets; all of them below that), wall ms (CPU ms) |")
        .append(" record every tablet opened, ms |")
        .append(" heap per tablet, bytes | a snapshot: MB, written ms, read ms |")
        .append(" a node's death: its tablets placed, ms (CPU ms) | tablets placed |")
        .append(" a join: one balancing decision, ms (moves) |")
        .append(" a node's lookup (a row's tablet and 255 after it): CPU µs, bytes |")
        .append("\n|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    for (Row r : rows) {
      b.append(String.format(Locale.ROOT,
          "| %,d | %d | %.0f (%.0f) | %.0f | %.0f | %.1f, %.0f, %.0f | %.1f (%.1f) | %,d | %.1f (%d) | %.0f, %,d |%n",
          r.tablets(), r.nodes(), r.createMs(), r.createCpuMs(), r.openMs(), r.bytesPerTablet(), r.snapshotMb(),
          r.snapshotWriteMs(), r.snapshotReadMs(), r.deathMs(), r.deathCpuMs(), r.placed(), r.balanceMs(), r.moves(),
          r.lookupUs(), r.lookupBytes()));
    }
    return b.toString();
  }
}
