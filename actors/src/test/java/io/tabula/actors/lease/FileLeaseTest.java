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
import java.lang.reflect.Field;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.coordination.lease.LeaseException;
import org.apache.pekko.coordination.lease.LeaseSettings;
import org.apache.pekko.coordination.lease.javadsl.Lease;
import org.apache.pekko.coordination.lease.javadsl.LeaseProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Unit tier with real files and real processes; one test starts an actor system. */
class FileLeaseTest {
  private static final long PROCESS_TIMEOUT_SECONDS = 60;

  @TempDir Path dir;

  /** Settings as LeaseProvider builds them from {@code tabula.master-lease}. */
  static LeaseSettings settings(Path leaseDir, String leaseName, String owner) {
    Config config = ConfigFactory.defaultReference()
        .getConfig("tabula.master-lease")
        .withValue("lease-dir", ConfigValueFactory.fromAnyRef(leaseDir.toString()));
    return LeaseSettings.apply(config, leaseName, owner);
  }

  private FileLease lease(String owner) {
    return new FileLease(settings(dir, "tabula-master", owner));
  }

  private static boolean await(CompletionStage<Boolean> stage)
      throws InterruptedException, ExecutionException, TimeoutException {
    return stage.toCompletableFuture().get(10, TimeUnit.SECONDS);
  }

  @Test
  void acquireHoldsUntilReleaseAndRecordsTheOwner() throws Exception {
    FileLease lease = lease("node-a:7355");
    assertFalse(lease.checkLease());
    assertTrue(await(lease.acquire()));
    assertTrue(lease.checkLease());
    assertTrue(await(lease.acquire()), "reentrant for the holder");
    assertTrue(await(lease.release()));
    assertFalse(lease.checkLease());
    assertFalse(await(lease.release()), "nothing left to release");
    // Read only after release: opening the file in the holding JVM would drop the lock.
    assertEquals("node-a:7355\n", Files.readString(lease.path(), UTF_8));
    assertEquals(dir.resolve("tabula-master.lease"), lease.path());
  }

  @Test
  void secondInstanceInThisJvmCannotAcquireUntilTheFirstReleases() throws Exception {
    FileLease first = lease("first");
    FileLease second = lease("second");
    assertTrue(await(first.acquire()));
    assertFalse(await(second.acquire()));
    assertFalse(second.checkLease());
    assertTrue(first.checkLease());
    // The refused attempt must not have dropped the first instance's OS lock.
    try (Holder other = Holder.start(dir, "tabula-master", "other-process")) {
      assertEquals("NOT-ACQUIRED", other.firstLine());
    }
    assertTrue(await(first.release()));
    assertTrue(await(second.acquire()));
    assertTrue(await(second.release()));
  }

  @Test
  void anotherProcessHoldingTheLockKeepsUsOutUntilItIsKilled() throws Exception {
    FileLease here = lease("here");
    try (Holder other = Holder.start(dir, "tabula-master", "other-process")) {
      assertEquals("ACQUIRED", other.firstLine());
      assertFalse(await(here.acquire()));
      assertFalse(here.checkLease());
      other.kill();
      assertTrue(await(here.acquire()), "the OS frees the lock when its holder dies");
      assertTrue(here.checkLease());
    } finally {
      await(here.release());
    }
    assertEquals("here\n", Files.readString(here.path(), UTF_8));
  }

  @Test
  void leaseLostCallbackIsKeptAndNotCalledWhileTheLockIsHeld() throws Exception {
    FileLease lease = lease("owner");
    List<Optional<Throwable>> calls = new ArrayList<>();
    assertTrue(await(lease.acquire(calls::add)));
    assertTrue(lease.checkLease());
    assertTrue(await(lease.release()));
    assertTrue(calls.isEmpty());
  }

  @Test
  void losingTheLockCallsTheCallbackOnce() throws Exception {
    FileLease lease = lease("owner");
    List<Optional<Throwable>> calls = new ArrayList<>();
    assertTrue(await(lease.acquire(calls::add)));
    closeChannel(lease);
    assertFalse(lease.checkLease());
    assertFalse(lease.checkLease());
    assertEquals(List.of(Optional.empty()), calls);
  }

  @Test
  void releaseForgetsTheCallbackForALaterAcquireWithoutOne() throws Exception {
    FileLease lease = lease("owner");
    List<Optional<Throwable>> calls = new ArrayList<>();
    assertTrue(await(lease.acquire(calls::add)));
    assertTrue(await(lease.release()));
    assertTrue(await(lease.acquire()));
    closeChannel(lease);
    assertFalse(lease.checkLease());
    assertTrue(calls.isEmpty(), "the callback belonged to the released lease");
  }

  /** Closes the held channel, as an interrupt during I/O on it would. */
  private static void closeChannel(FileLease lease) throws Exception {
    Field field = FileLease.class.getDeclaredField("channel");
    field.setAccessible(true);
    FileChannel channel;
    synchronized (lease) {
      channel = (FileChannel) field.get(lease);
    }
    channel.close();
  }

  @Test
  void leaseNamesAreEncodedIntoOneFileInLeaseDir() {
    FileLease lease = new FileLease(settings(dir, "shard/../x y", "owner"));
    assertEquals(dir, lease.path().getParent());
    assertEquals("shard%2F..%2Fx+y.lease", lease.path().getFileName().toString());
  }

  @Test
  void unusableLeaseDirFailsTheAcquireNamingTheFile() throws Exception {
    Path notADir = Files.writeString(dir.resolve("plain-file"), "x");
    FileLease lease = new FileLease(settings(notADir, "tabula-master", "owner"));
    ExecutionException e =
        assertThrows(ExecutionException.class, () -> await(lease.acquire()));
    assertInstanceOf(LeaseException.class, e.getCause());
    assertTrue(e.getCause().getMessage().contains(lease.path().toString()), e.getMessage());
    assertFalse(lease.checkLease());
    // A failed attempt claims nothing: another instance on the same path meets the same
    // I/O error, not a refusal because the path looks held in this JVM.
    FileLease again = new FileLease(settings(notADir, "tabula-master", "again"));
    ExecutionException second =
        assertThrows(ExecutionException.class, () -> await(again.acquire()));
    assertInstanceOf(LeaseException.class, second.getCause());
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
      assertEquals(dir.resolve("tabula-master.lease"), fileLease.path());
      assertTrue(await(lease.acquire()));
      assertTrue(await(lease.release()));
    } finally {
      testKit.shutdownTestKit();
    }
  }

  /** A {@link LeaseHolderMain} process, killed on close. */
  private static final class Holder implements AutoCloseable {
    private final Process process;
    private final BufferedReader stdout;

    private Holder(Process process) {
      this.process = process;
      this.stdout = new BufferedReader(new InputStreamReader(process.getInputStream(), UTF_8));
    }

    static Holder start(Path dir, String leaseName, String owner) throws IOException {
      String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
      ProcessBuilder builder = new ProcessBuilder(
          java, "-Xmx64m", "-cp", System.getProperty("java.class.path"),
          LeaseHolderMain.class.getName(), dir.toString(), leaseName, owner);
      builder.redirectError(ProcessBuilder.Redirect.INHERIT);
      return new Holder(builder.start());
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
