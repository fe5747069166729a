package io.tabula.actors.lease;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import com.typesafe.config.ConfigValueFactory;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.coordination.lease.LeaseException;
import org.apache.pekko.coordination.lease.LeaseSettings;
import org.apache.pekko.coordination.lease.javadsl.Lease;
import org.apache.pekko.coordination.lease.javadsl.LeaseProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Unit tier with real files and real processes (killed and frozen); one test starts an actor
 * system. Leases here expire after 1 s without renewal (renewed every 200 ms), so the tests are
 * quick; the node's own settings are in reference.conf.
 */
class FileLeaseTest {
  private static final long PROCESS_TIMEOUT_SECONDS = 60;

  @TempDir Path dir;

  /** Settings as LeaseProvider builds them from {@code tabula.master-lease}, with quick timings. */
  static LeaseSettings settings(Path leaseDir, String leaseName, String owner) {
    Config config = ConfigFactory.defaultReference()
        .getConfig("tabula.master-lease")
        .withValue("lease-dir", ConfigValueFactory.fromAnyRef(leaseDir.toString()))
        .withValue("heartbeat-timeout", ConfigValueFactory.fromAnyRef("1s"))
        .withValue("heartbeat-interval", ConfigValueFactory.fromAnyRef("200ms"));
    return LeaseSettings.apply(config, leaseName, owner);
  }

  private FileLease lease(String owner) {
    return new FileLease(settings(dir, "tabula-master", owner));
  }

  static boolean await(CompletionStage<Boolean> stage)
      throws InterruptedException, ExecutionException, TimeoutException {
    return stage.toCompletableFuture().get(10, TimeUnit.SECONDS);
  }

  /** Tries to acquire every 100 ms until it works; returns the ms it took, failing after {@code withinMs}. */
  static long acquireWithin(org.apache.pekko.coordination.lease.javadsl.Lease lease, long withinMs) throws Exception {
    long start = System.nanoTime();
    while (!await(lease.acquire())) {
      long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
      assertTrue(ms < withinMs, "not acquired within " + withinMs + " ms");
      Thread.sleep(100);
    }
    return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
  }

  @Test
  void acquireHoldsWhileRenewedAndReleaseLetsAnotherTakeItAtOnce() throws Exception {
    FileLease a = lease("node-a:7355");
    FileLease b = lease("node-b:7355");
    assertFalse(a.checkLease());
    assertTrue(await(a.acquire()));
    assertTrue(a.checkLease());
    assertTrue(await(a.acquire()), "reentrant for the holder");
    Thread.sleep(2_500); // past the timeout: the renewals keep it
    assertFalse(await(b.acquire()), "renewed, so not expired");
    assertTrue(a.checkLease());
    assertTrue(FileLease.holdsAny(dir));
    assertTrue(await(a.release()));
    assertFalse(a.checkLease());
    assertFalse(FileLease.holdsAny(dir));
    assertFalse(await(a.release()), "nothing left to release");
    assertTrue(await(b.acquire()), "a released lease is taken without waiting for it to expire");
    assertEquals("node-b:7355", Files.readString(dir.resolve("tabula-master.leases").resolve("0000000002"), UTF_8)
        .lines().findFirst().orElseThrow(), "the holder's name is recorded for operators");
    assertTrue(await(b.release()));
  }

  @Test
  void aKilledHoldersLeaseIsTakenAtOnceBecauseTheOsFreedItsLock() throws Exception {
    LeaseSettings slow = LeaseSettings.apply(ConfigFactory.defaultReference().getConfig("tabula.master-lease")
        .withValue("lease-dir", ConfigValueFactory.fromAnyRef(dir.toString())), "tabula-master", "here");
    FileLease here = new FileLease(slow); // the node's own 8 s timeout: waiting it out would show
    try (Holder other = Holder.start(dir, "tabula-master", "other-process")) {
      assertEquals("ACQUIRED", other.firstLine());
      assertFalse(await(here.acquire()));
      assertFalse(here.checkLease());
      other.kill();
      long ms = acquireWithin(here, 2_000);
      assertTrue(here.checkLease());
      System.out.printf("a killed holder's lease was taken %d ms after the kill (timeout 8 s)%n", ms);
    } finally {
      await(here.release());
    }
  }

  @Test
  void aFrozenHolderLosesTheLeaseAndFindsOutWhenItResumes() throws Exception {
    FileLease here = lease("here");
    try (Holder other = Holder.start(dir, "tabula-master", "other-process")) {
      assertEquals("ACQUIRED", other.firstLine());
      other.signal("STOP");
      try {
        assertFalse(await(here.acquire()), "a frozen holder keeps its OS lock: it is waited out");
        long ms = acquireWithin(here, 5_000);
        assertTrue(ms >= 500, "taken only once expired: " + ms + " ms");
        assertTrue(here.checkLease());
      } finally {
        other.signal("CONT");
      }
      assertTrue(other.nextLine().startsWith("LOST"), "the resumed holder reports the loss");
      Thread.sleep(600);
      assertTrue(here.checkLease(), "the resumed holder did not take it back");
      assertEquals(2, Files.list(dir.resolve("tabula-master.leases")).filter(p -> p.getFileName().toString()
          .matches("\\d{10}")).count(), "two generations: the frozen holder's and ours");
    } finally {
      await(here.release());
    }
  }

  /**
   * S9 (docs/fencing.md, "A frozen master"): a step of the storage's clock (NTP correcting it by
   * minutes) makes the holder's last renewal look minutes old; the lease of a holder that keeps
   * renewing is still not taken, however much time passes on the taker's clock between its
   * looks.
   */
  @Test
  void aStepOfTheStoragesClockDoesNotMakeARenewingHoldersLeaseTakeable() throws Exception {
    FileLease holder = lease("holder");
    AtomicLong takersClock = new AtomicLong();
    FileLease taker = new FileLease(settings(dir, "tabula-master", "taker"), takersClock::get);
    assertTrue(await(holder.acquire()));
    try {
      for (int i = 0; i < 5; i++) {
        String before = Files.readString(GENERATION_1.apply(dir), UTF_8);
        while (Files.readString(GENERATION_1.apply(dir), UTF_8).equals(before)) {
          Thread.sleep(20); // until the holder renews
        }
        // The storage's clock was stepped forward by ten minutes since that renewal.
        Files.setLastModifiedTime(GENERATION_1.apply(dir), FileTime.fromMillis(System.currentTimeMillis() - 600_000));
        assertFalse(await(taker.acquire()), "the holder renewed moments ago");
        takersClock.addAndGet(TimeUnit.MINUTES.toNanos(10));
      }
      assertTrue(holder.checkLease());
    } finally {
      await(holder.release());
    }
  }

  /** The first generation's file in a lease folder under {@code dir}. */
  private static final java.util.function.Function<Path, Path> GENERATION_1 =
      d -> d.resolve("tabula-master.leases").resolve("0000000001");

  /** A holder that took generation 1 and then froze after {@code renewals} renewals: its file, and no dead process to find. */
  private void frozenHolder(long renewals) throws IOException {
    Files.createDirectories(GENERATION_1.apply(dir).getParent());
    Files.writeString(GENERATION_1.apply(dir), "frozen\n" + renewals + "\n", UTF_8);
  }

  /**
   * S9: a holder that stops renewing is taken once the taker has seen its generation unchanged
   * for longer than the timeout (1 s here) by the taker's own clock, and not before; a renewal
   * seen meanwhile starts the wait again. No file time counts: the file's looks ten minutes old
   * from the start.
   */
  @Test
  void aHolderThatStopsRenewingIsTakenOnceSeenUnchangedForTheTimeout() throws Exception {
    frozenHolder(7);
    Files.setLastModifiedTime(GENERATION_1.apply(dir), FileTime.fromMillis(System.currentTimeMillis() - 600_000));
    AtomicLong clock = new AtomicLong();
    FileLease taker = new FileLease(settings(dir, "tabula-master", "taker"), clock::get);
    assertFalse(await(taker.acquire()), "the first look starts the wait");
    clock.addAndGet(TimeUnit.MILLISECONDS.toNanos(600));
    assertFalse(await(taker.acquire()));
    frozenHolder(8); // it renewed after all
    clock.addAndGet(TimeUnit.MILLISECONDS.toNanos(600));
    assertFalse(await(taker.acquire()), "a renewal seen starts the wait again");
    clock.addAndGet(TimeUnit.SECONDS.toNanos(1));
    assertFalse(await(taker.acquire()), "unchanged for exactly the timeout: not longer");
    clock.addAndGet(1);
    assertTrue(await(taker.acquire()), "unchanged for longer than the timeout");
    assertTrue(taker.checkLease());
    assertEquals("taker", Files.readString(GENERATION_1.apply(dir).resolveSibling("0000000002"), UTF_8).lines()
        .findFirst().orElseThrow());
    assertTrue(await(taker.release()));
  }

  /**
   * A node that has been watching the lease (as the instances Pekko's lease provider makes do,
   * every heartbeat interval) takes a holder that stopped renewing at its first try, once its
   * looks saw the generation unchanged for longer than the timeout.
   */
  @Test
  void aWatchingNodeTakesAFrozenHoldersLeaseAtItsFirstTry() throws Exception {
    frozenHolder(3);
    AtomicLong clock = new AtomicLong();
    FileLease watcher = new FileLease(settings(dir, "tabula-master", "watcher"), clock::get);
    watcher.watch();
    clock.addAndGet(TimeUnit.MILLISECONDS.toNanos(1_001));
    watcher.watch();
    assertTrue(await(watcher.acquire()));
    assertTrue(await(watcher.release()));
  }

  @Test
  void aNewerGenerationMeansLostAndTheCallbackIsCalledOnce() throws Exception {
    FileLease lease = lease("owner");
    List<Optional<Throwable>> calls = new CopyOnWriteArrayList<>();
    assertTrue(await(lease.acquire(calls::add)));
    assertTrue(lease.checkLease());
    // Another holder's generation, as a taker writes it after this one stopped renewing.
    Files.writeString(dir.resolve("tabula-master.leases").resolve("0000000002"), "thief\n0\n", UTF_8);
    assertFalse(lease.checkLease());
    Thread.sleep(500);
    assertFalse(lease.checkLease());
    assertEquals(1, calls.size(), "called once: " + calls);
    assertTrue(calls.get(0).isPresent() && calls.get(0).get().getMessage().contains("newer"), calls.toString());
  }

  @Test
  void releaseForgetsTheCallback() throws Exception {
    FileLease lease = lease("owner");
    List<Optional<Throwable>> calls = new CopyOnWriteArrayList<>();
    assertTrue(await(lease.acquire(calls::add)));
    assertTrue(await(lease.release()));
    assertTrue(await(lease.acquire()));
    Files.writeString(dir.resolve("tabula-master.leases").resolve("0000000003"), "thief\n0\n", UTF_8);
    assertFalse(lease.checkLease());
    assertTrue(calls.isEmpty(), "the callback belonged to the released lease");
  }

  @Test
  void leaseNamesAreEncodedIntoOneFolderInLeaseDir() {
    FileLease lease = new FileLease(settings(dir, "shard/../x y", "owner"));
    assertEquals(dir, lease.dir().getParent());
    assertEquals("shard%2F..%2Fx+y.leases", lease.dir().getFileName().toString());
  }

  @Test
  void unusableLeaseDirFailsTheAcquireNamingTheFolder() throws Exception {
    Path notADir = Files.writeString(dir.resolve("plain-file"), "x");
    FileLease lease = new FileLease(settings(notADir, "tabula-master", "owner"));
    ExecutionException e =
        assertThrows(ExecutionException.class, () -> await(lease.acquire()));
    assertInstanceOf(LeaseException.class, e.getCause());
    assertTrue(e.getCause().getMessage().contains(lease.dir().toString()), e.getMessage());
    assertFalse(lease.checkLease());
  }

  @Test
  void timingsThatCouldNotRenewInTimeAreRefused() {
    Config config = ConfigFactory.defaultReference().getConfig("tabula.master-lease")
        .withValue("lease-dir", ConfigValueFactory.fromAnyRef(dir.toString()))
        .withValue("heartbeat-timeout", ConfigValueFactory.fromAnyRef("1s"))
        .withValue("heartbeat-interval", ConfigValueFactory.fromAnyRef("800ms"));
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> new FileLease(LeaseSettings.apply(config, "tabula-master", "o")));
    assertTrue(e.getMessage().contains("heartbeat-interval"), e.getMessage());
  }

  @Test
  void emptyLeaseDirIsRefusedWithAClearMessage() {
    LeaseSettings noDir = LeaseSettings.apply(
        ConfigFactory.defaultReference().getConfig("tabula.master-lease"), "tabula-master", "o");
    IllegalArgumentException e =
        assertThrows(IllegalArgumentException.class, () -> new FileLease(noDir));
    assertTrue(e.getMessage().contains("lease-dir"), e.getMessage());
  }

  @Test
  void leaseProviderLoadsFileLeaseFromTheMasterLeaseSection() throws Exception {
    Config config = ConfigFactory.parseMap(
            Map.of("tabula.master-lease.lease-dir", dir.toString()))
        .withFallback(ConfigFactory.load());
    ActorTestKit testKit = ActorTestKit.create(config);
    try {
      Lease lease = LeaseProvider.get(testKit.system())
          .getLease("tabula-master", "tabula.master-lease", "node-a:7355");
      FileLease fileLease = assertInstanceOf(FileLease.class, lease);
      assertEquals("tabula-master", fileLease.getSettings().leaseName());
      assertEquals("node-a:7355", fileLease.getSettings().ownerName());
      assertEquals(dir.resolve("tabula-master.leases"), fileLease.dir());
      assertTrue(await(lease.acquire()));
      assertTrue(await(lease.release()));
    } finally {
      testKit.shutdownTestKit();
    }
  }

  /** A {@link LeaseHolderMain} process, killed on close. */
  static final class Holder implements AutoCloseable {
    private final Process process;
    private final BufferedReader stdout;

    private Holder(Process process) {
      this.process = process;
      this.stdout = new BufferedReader(new InputStreamReader(process.getInputStream(), UTF_8));
    }

    static Holder start(Path dir, String leaseName, String owner) throws IOException {
      return start("file", dir.toString(), leaseName, owner);
    }

    /** A holder of a lease of {@code kind} ("file" or "postgres") at {@code where}. */
    static Holder start(String kind, String where, String leaseName, String owner) throws IOException {
      String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
      ProcessBuilder builder = new ProcessBuilder(
          java, "-Xmx64m", "-cp", System.getProperty("java.class.path"),
          LeaseHolderMain.class.getName(), kind, where, leaseName, owner);
      builder.redirectError(ProcessBuilder.Redirect.INHERIT);
      return new Holder(builder.start());
    }

    /** Sends one line to the holder's standard input. */
    void send(String line) throws IOException {
      process.getOutputStream().write((line + "\n").getBytes(UTF_8));
      process.getOutputStream().flush();
    }

    void signal(String signal) throws IOException, InterruptedException {
      Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(process.pid())).inheritIO().start();
      assertTrue(kill.waitFor(10, TimeUnit.SECONDS) && kill.exitValue() == 0, "kill -" + signal + " failed");
    }

    String nextLine() throws InterruptedException, ExecutionException {
      return firstLine();
    }

    String firstLine() throws InterruptedException, ExecutionException {
      try {
        return CompletableFuture.supplyAsync(this::readLine)
            .get(PROCESS_TIMEOUT_SECONDS, TimeUnit.SECONDS);
      } catch (TimeoutException e) {
        throw new AssertionError("lease holder process printed nothing in "
            + PROCESS_TIMEOUT_SECONDS + " s", e);
      }
    }

    private String readLine() {
      try {
        return stdout.readLine();
      } catch (IOException e) {
        throw new IllegalStateException("reading the lease holder's output", e);
      }
    }

    void kill() throws InterruptedException {
      process.destroyForcibly();
      if (!process.waitFor(PROCESS_TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
        throw new AssertionError("lease holder process did not die");
      }
    }

    @Override
    public void close() {
      process.destroyForcibly();
      try {
        process.waitFor(PROCESS_TIMEOUT_SECONDS, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }
}
