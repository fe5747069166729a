package io.tabula.persistence.storage;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The storage root's identity (docs/formats/root-id.md): golden bytes (format drift fails the
 * build), exclusive creation by whichever of two starting nodes gets there first, damage
 * reported as such, and the check a node makes before acting on the root. Regenerate the
 * golden file after a deliberate format change with
 * {@code -Dtabula.golden.write=persistence/src/test/resources/golden/root-id}.
 */
class RootIdentityTest {
  private static final UUID GOLDEN_ID = UUID.fromString("3d1f6c2a-8b4e-4f0a-9c7d-5e2b1a0f9c84");

  @TempDir
  Path dir;

  @Test
  void goldenFileDecodesAndIsReproducedByteForByte() throws IOException {
    Optional<byte[]> read = GoldenFile.read("root-id", RootIdentity.FILE, RootIdentity.encode(GOLDEN_ID));
    if (read.isEmpty()) {
      return; // regenerated
    }
    byte[] golden = read.get();
    assertEquals(GOLDEN_ID, RootIdentity.decode(RootIdentity.FILE, golden));
    assertArrayEquals(golden, RootIdentity.encode(GOLDEN_ID), "encoder output drifted from golden/root-id");
    Files.write(dir.resolve(RootIdentity.FILE), golden);
    assertEquals(Optional.of(GOLDEN_ID), RootIdentity.read(new FileStorage(dir)), "read from a root");
  }

  @Test
  void aRootGetsItsIdentityOnceAndKeepsIt() throws IOException {
    FileStorage storage = new FileStorage(dir);
    assertEquals(Optional.empty(), RootIdentity.read(storage), "a fresh root has none");
    UUID id = RootIdentity.establish(storage);
    assertEquals(id, RootIdentity.establish(storage), "the second node finds the first's");
    assertEquals(Optional.of(id), RootIdentity.read(new FileStorage(dir)), "another process reads the same");
    assertEquals(List.of(RootIdentity.FILE), storage.list(""), "only the identity file is left");
    assertNotEquals(id, RootIdentity.establish(new FileStorage(dir.resolve("other"))), "another root, another id");
  }

  /**
   * Two nodes start at once on a fresh root, each through its own storage object (as two
   * processes): both find no identity and write their own before either publishes. The first
   * publishes and goes on with its id; the second, publishing after that, must not replace it
   * (the first node may already have acted on it) and goes on with the first's.
   */
  @Test
  void twoNodesStartingAtOnceOnAFreshRootAgreeOnOneIdentity() throws Exception {
    CyclicBarrier bothWritten = new CyclicBarrier(2);
    CountDownLatch firstDone = new CountDownLatch(1);
    ExecutorService threads = Executors.newFixedThreadPool(2);
    try {
      UUID first = UUID.randomUUID();
      UUID second = UUID.randomUUID();
      Future<UUID> a = threads.submit(() -> RootIdentity.establish(new HeldStorage(new FileStorage(dir),
          bothWritten, new CountDownLatch(0)), first));
      Future<UUID> b = threads.submit(() -> RootIdentity.establish(new HeldStorage(new FileStorage(dir),
          bothWritten, firstDone), second));
      assertEquals(first, a.get(30, TimeUnit.SECONDS), "the first to publish keeps its id");
      firstDone.countDown();
      assertEquals(first, b.get(30, TimeUnit.SECONDS), "the second goes on with the first's id");
      assertEquals(Optional.of(first), RootIdentity.read(new FileStorage(dir)));
      assertEquals(List.of(RootIdentity.FILE), new FileStorage(dir).list(""), "the loser's temporary file is gone");
    } finally {
      threads.shutdownNow();
    }
  }

  @Test
  void aDamagedFileIsAnErrorNeverAMissingIdentity() throws IOException {
    FileStorage storage = new FileStorage(dir);
    byte[] good = RootIdentity.encode(GOLDEN_ID);
    for (int i = 0; i < good.length; i++) {
      byte[] bad = good.clone();
      bad[i] ^= 0x10;
      Files.write(dir.resolve(RootIdentity.FILE), bad);
      int at = i;
      CorruptionException e = assertThrows(CorruptionException.class, () -> RootIdentity.read(storage),
          "byte " + at + " flipped");
      assertEquals(RootIdentity.FILE, e.file());
      assertThrows(CorruptionException.class, () -> RootIdentity.establish(storage), "no new identity over it");
    }
    Files.write(dir.resolve(RootIdentity.FILE), java.util.Arrays.copyOf(good, 20));
    CorruptionException cut = assertThrows(CorruptionException.class, () -> RootIdentity.read(storage));
    assertTrue(cut.getMessage().contains("20 bytes"), cut.getMessage());
    Files.write(dir.resolve(RootIdentity.FILE), new byte[0]);
    assertThrows(CorruptionException.class, () -> RootIdentity.read(storage), "an empty file");
  }

  @Test
  void theCheckRefusesAnotherIdentityAndNone() throws IOException {
    FileStorage storage = new FileStorage(dir);
    UUID id = RootIdentity.establish(storage);
    RootIdentity.check(storage, "root A", id, "tablet t1 is not opened");

    UUID other = RootIdentity.establish(new FileStorage(dir.resolve("b")));
    RootMismatchException wrong = assertThrows(RootMismatchException.class,
        () -> RootIdentity.check(storage, "root A", other, "tablet t1 is not opened"));
    assertEquals(other, wrong.expected());
    assertEquals(id, wrong.found());
    assertTrue(wrong.getMessage().contains("root A") && wrong.getMessage().contains(id.toString())
        && wrong.getMessage().contains(other.toString()), wrong.getMessage());

    storage.delete(RootIdentity.FILE);
    RootMismatchException none = assertThrows(RootMismatchException.class,
        () -> RootIdentity.check(storage, "root A", id, "tablet t1 is not opened"));
    assertNull(none.found());
  }

  /**
   * Holds each publish until the other writer has written its temporary file too, then until
   * {@code go} opens.
   */
  private static final class HeldStorage extends ForwardingStorage {
    private final CyclicBarrier bothWritten;
    private final CountDownLatch go;

    HeldStorage(Storage delegate, CyclicBarrier bothWritten, CountDownLatch go) {
      super(delegate);
      this.bothWritten = bothWritten;
      this.go = go;
    }

    @Override
    public boolean renameIfAbsent(String from, String to) throws IOException {
      try {
        bothWritten.await(30, TimeUnit.SECONDS);
        if (!go.await(30, TimeUnit.SECONDS)) {
          throw new IOException("never let go");
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IOException("interrupted while held", e);
      } catch (java.util.concurrent.BrokenBarrierException | java.util.concurrent.TimeoutException e) {
        throw new IOException("the other writer never came", e);
      }
      return super.renameIfAbsent(from, to);
    }
  }
}
