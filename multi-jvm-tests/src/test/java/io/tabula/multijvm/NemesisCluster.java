package io.tabula.multijvm;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The four nodes of the nemesis scenario, n1 to n4, on one root: each name is served by one
 * life (a node process) at a time, except while a restart under the same name overlaps an
 * earlier life that is stopped. Starts lives (the same name, fresh ports, a log per life:
 * {@code n2.log}, then {@code n2-2.log}, ...), sends them signals, cuts them off, and waits
 * until the cluster is healthy: four lives Up and ready, and every tablet of table t serving
 * on one of them.
 *
 * <p>Every bound here is stated, and generous for a slow shared machine (a node may take a
 * minute to start): a wait past its bound throws {@link Unavailable}, a real unavailability.
 * {@link #close} stops every process started, a stopped one included, and so does a start
 * that finishes after it.
 *
 * <p>Thread-safe: the scenario's thread changes the lives; the load's threads read them.
 */
final class NemesisCluster implements AutoCloseable {
  static final List<String> NAMES = List.of("n1", "n2", "n3", "n4");
  /** How long a node may take to be ready once started. */
  static final Duration READY = Duration.ofSeconds(120);
  /** How long the others may take to stop counting a killed, stopped or cut-off life as a member. */
  static final Duration DOWNED = Duration.ofSeconds(120);
  /** How long the cluster may take to be healthy again once a fault is over. */
  static final Duration SETTLE = Duration.ofSeconds(180);

  private static final Pattern NODE = Pattern.compile(
      "\"name\":\"([^\"]+)\",\"address\":\"[^\"]*\",\"state\":\"([a-z]+)\",\"grpc\":\"([^\"]*)\"");

  /** A life of node {@code name}: its {@code number} (1 first), its process, when it started. */
  record Life(String name, int number, NodeJvm jvm, long startedAt) {
    String label() {
      return name + "#" + number;
    }
  }

  /** A wait for the cluster past its stated bound. */
  static final class Unavailable extends Exception {
    Unavailable(String message) {
      super(message);
    }
  }

  private final ClusterFixture fixture;
  private final NemesisReport report;
  private final Path plain;
  private final Path refusing;
  private final Map<String, Life> current = new ConcurrentHashMap<>();
  private final Set<Life> stopped = ConcurrentHashMap.newKeySet();
  private final Map<String, Integer> lives = new ConcurrentHashMap<>();
  private final List<Consumer<Life>> onStart = new CopyOnWriteArrayList<>();
  private volatile boolean closed;

  /**
   * The cluster on {@code fixture}'s root: every node runs with {@code hocon} and the
   * partition switch; a node started {@linkplain #start(String, boolean) refusing} also runs on
   * {@link FsyncRefusingStorage}.
   */
  NemesisCluster(ClusterFixture fixture, NemesisReport report, String hocon) throws IOException {
    this.fixture = fixture;
    this.report = report;
    String base = hocon + """
        pekko.remote.artery.advanced.test-mode = on
        pekko.extensions += "io.tabula.multijvm.PartitionSwitch$Id"
        """;
    this.plain = fixture.config("nemesis.conf", base);
    this.refusing = fixture.config("nemesis-fsync-refused.conf", base + "tabula.node.storage-class = \""
        + FsyncRefusingStorage.class.getName() + "\"\n");
  }

  /** Calls {@code listener} with every life started from now on, once it is ready. */
  void onStart(Consumer<Life> listener) {
    onStart.add(listener);
  }

  /** The life that serves {@code name} now, if any (it may be stopped or cut off). */
  Optional<Life> life(String name) {
    return Optional.ofNullable(current.get(name));
  }

  /** The lives that serve now, stopped or not. */
  List<Life> lives() {
    return new ArrayList<>(current.values());
  }

  /** Lives that run, are not stopped and serve their name now: the ones to go through. */
  List<Life> healthy() {
    List<Life> out = new ArrayList<>();
    for (Life l : current.values()) {
      if (l.jvm().alive() && !stopped.contains(l)) {
        out.add(l);
      }
    }
    out.sort(Comparator.comparing(Life::name));
    return out;
  }

  /** A healthy life other than {@code name}'s. */
  Life other(String name) throws Unavailable {
    return healthy().stream().filter(l -> !l.name().equals(name)).findFirst()
        .orElseThrow(() -> new Unavailable("no healthy node other than " + name));
  }

  /** The master's node: the oldest of the healthy lives (the cluster singleton runs on the oldest member). */
  String master() throws Unavailable {
    return healthy().stream().min(Comparator.comparingLong(Life::startedAt)).map(Life::name)
        .orElseThrow(() -> new Unavailable("no healthy node"));
  }

  boolean isStopped(Life l) {
    return stopped.contains(l);
  }

  /**
   * Starts a new life of {@code name} (fresh ports, its own log), on the fsync-refusing storage if
   * {@code refusingFsync}, joining a healthy node; first waits until no earlier life of
   * {@code name} is a member any more (the cluster refuses a duplicate name), and starts again
   * while the cluster still refuses it, up to {@link #DOWNED}.
   */
  Life start(String name, boolean refusingFsync) throws IOException, InterruptedException, Unavailable {
    long deadline = System.nanoTime() + DOWNED.toNanos();
    boolean first = current.isEmpty();
    if (!first) {
      awaitGone(name, other(name), deadline);
    }
    while (true) {
      int number = lives.merge(name, 1, Integer::sum);
      Life life;
      try {
        NodeJvm seed = first ? null : other(name).jvm();
        NodeJvm jvm = fixture.start(name, seed, refusingFsync ? refusing : plain, READY);
        life = new Life(name, number, jvm, System.nanoTime());
      } catch (IllegalStateException e) {
        if (String.valueOf(e.getMessage()).contains("is already in the cluster") && System.nanoTime() < deadline) {
          report.event(name + " life " + number + " was refused (an earlier life still counts as a member); "
              + "starting again in 3 s");
          Thread.sleep(3_000);
          continue;
        }
        throw new Unavailable(name + " life " + number + " did not start within " + READY + ": " + e.getMessage());
      }
      synchronized (this) {
        if (closed) {
          life.jvm().close();
          throw new InterruptedException("the scenario closed while " + name + " started");
        }
        current.put(name, life);
      }
      report.event(String.format("%s life %d ready (pid %d, gRPC %s, log %s%s)", name, number, life.jvm().pid(),
          life.jvm().endpoint(), life.jvm().log.getFileName(), refusingFsync ? ", on the fsync-refusing disk" : ""));
      onStart.forEach(c -> c.accept(life));
      return life;
    }
  }

  /** Waits until {@code via} counts no life of {@code name} as a member (Up, joining or leaving). */
  private void awaitGone(String name, Life via, long deadline) throws InterruptedException, Unavailable {
    while (true) {
      List<String[]> members = members(via);
      if (members != null && members.stream().noneMatch(m -> m[0].equals(name) && isMember(m[1]))) {
        return;
      }
      if (System.nanoTime() > deadline) {
        throw new Unavailable("an earlier life of " + name + " was still a member, as " + via.label() + " sees it, "
            + DOWNED.toSeconds() + " s after it was killed, stopped or cut off");
      }
      Thread.sleep(500);
    }
  }

  private static boolean isMember(String state) {
    return state.equals("up") || state.equals("joining") || state.equals("weaklyup") || state.equals("leaving");
  }

  /** {name, state, grpc} of every member as {@code via} sees them; null if it did not answer. */
  static List<String[]> members(Life via) throws InterruptedException {
    try {
      var answer = via.jvm().get("/tabula/nodes");
      if (answer.statusCode() != 200) {
        return null;
      }
      List<String[]> out = new ArrayList<>();
      Matcher m = NODE.matcher(answer.body());
      while (m.find()) {
        out.add(new String[] {m.group(1), m.group(2), m.group(3)});
      }
      return out;
    } catch (IOException e) {
      return null;
    }
  }

  /** kill -9 of {@code name}'s life; it serves no more. */
  Life kill(String name) throws InterruptedException {
    Life l = current.remove(name);
    l.jvm().kill();
    stopped.remove(l);
    return l;
  }

  /** SIGSTOP of {@code name}'s life. */
  Life stop(String name) throws IOException, InterruptedException {
    Life l = current.get(name);
    stopped.add(l);
    l.jvm().signal("STOP");
    return l;
  }

  /** SIGCONT of {@code life}. */
  void resume(Life life) throws IOException, InterruptedException {
    life.jvm().signal("CONT");
    stopped.remove(life);
  }

  /** Cuts {@code name} off the other nodes' remoting traffic ({@link PartitionSwitch}), or heals it. */
  void partition(String name, boolean cut) throws IOException {
    Path file = PartitionSwitch.switchFile(fixture.data, name);
    if (cut) {
      Files.createFile(file);
    } else {
      Files.deleteIfExists(file);
    }
  }

  /** Switches fsync refusal on or off for the lives on {@link FsyncRefusingStorage}. */
  void refuseFsync(boolean on) throws IOException {
    Path file = fixture.root.resolve(FsyncRefusingStorage.SWITCH);
    if (on) {
      Files.createFile(file);
    } else {
      Files.deleteIfExists(file);
    }
  }

  /** Forgets {@code name}'s life once its process has ended (drained, downed, or stopped by itself). */
  void ended(String name) {
    current.computeIfPresent(name, (n, l) -> l.jvm().alive() ? l : null);
  }

  /**
   * Waits until the cluster is healthy: each of the four names served by a running life that is
   * not stopped and answers ready, every other node counting each of them Up (and no other life
   * of the same name as a member), and every tablet of table t serving on one of them.
   */
  void awaitHealthy(Duration within) throws InterruptedException, Unavailable {
    long deadline = System.nanoTime() + within.toNanos();
    String why = "";
    while (true) {
      why = unhealthy();
      if (why.isEmpty()) {
        return;
      }
      if (System.nanoTime() > deadline) {
        throw new Unavailable("the cluster was not healthy again within " + within.toSeconds() + " s: " + why);
      }
      Thread.sleep(500);
    }
  }

  /** Why the cluster is not healthy now; empty if it is. */
  private String unhealthy() throws InterruptedException {
    List<Life> ok = healthy();
    if (ok.size() < NAMES.size()) {
      return "only " + ok.stream().map(Life::label).toList() + " run and are not stopped";
    }
    for (Life l : ok) {
      try {
        if (l.jvm().get("/ready").statusCode() != 200) {
          return l.label() + " is not ready";
        }
      } catch (IOException e) {
        return l.label() + " does not answer: " + e;
      }
      List<String[]> members = members(l);
      if (members == null) {
        return l.label() + " does not list the nodes";
      }
      for (Life other : ok) {
        long up = members.stream().filter(m -> m[0].equals(other.name()) && m[1].equals("up")
            && m[2].equals(other.jvm().endpoint())).count();
        long others = members.stream().filter(m -> m[0].equals(other.name()) && isMember(m[1])
            && !m[2].equals(other.jvm().endpoint())).count();
        if (up != 1 || others != 0) {
          return l.label() + " does not count " + other.label() + " as the one Up member of its name";
        }
      }
    }
    try {
      Map<String, String[]> tablets = ClusterFixture.tablets(ok.get(0).jvm(), "t");
      if (tablets.isEmpty()) {
        return "no tablets listed";
      }
      for (Map.Entry<String, String[]> t : tablets.entrySet()) {
        if (!t.getValue()[1].equals("serving") || !NAMES.contains(t.getValue()[0])) {
          return "tablet " + t.getKey() + " is " + t.getValue()[1] + " on " + t.getValue()[0];
        }
      }
    } catch (IOException e) {
      return "the tablets could not be listed: " + e;
    }
    return "";
  }

  /** Stops every process started, stopped ones included; a start that finishes later stops its process too. */
  @Override
  public void close() throws InterruptedException {
    synchronized (this) {
      closed = true;
    }
    for (NodeJvm n : fixture.nodes) {
      n.close();
    }
    for (String name : NAMES) {
      try {
        partition(name, false);
      } catch (IOException e) {
        System.out.println("could not heal " + name + ": " + e);
      }
    }
  }
}
