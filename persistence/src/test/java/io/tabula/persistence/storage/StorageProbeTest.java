package io.tabula.persistence.storage;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A storage probe (docs/formats/storage-probe.md): golden bytes (format drift fails the build),
 * a probe read back on the root it was written to and missing from a copy of the root made
 * before it, damage reported as such, and names that cannot leave the probes' folder.
 * Regenerate the golden file after a deliberate format change with {@code
 * -Dtabula.golden.write=persistence/src/test/resources/golden/storage-probe}.
 */
class StorageProbeTest {
  private static final String GOLDEN_NAME = "n1.mx0pko6t-df31";
  private static final UUID GOLDEN_NONCE = UUID.fromString("8f14e45f-ceea-467a-9f05-2bd3a1c6e7b0");

  @TempDir
  Path dir;

  @Test
  void goldenFileDecodesAndIsReproducedByteForByte() throws IOException {
    Optional<byte[]> read = GoldenFile.read("storage-probe", GOLDEN_NAME, StorageProbe.encode(GOLDEN_NONCE));
    if (read.isEmpty()) {
      return; // regenerated
    }
    byte[] golden = read.get();
    assertEquals(GOLDEN_NONCE, StorageProbe.decode(GOLDEN_NAME, golden));
    assertArrayEquals(golden, StorageProbe.encode(GOLDEN_NONCE), "encoder output drifted from golden/storage-probe");
    Files.createDirectories(dir.resolve(StorageProbe.FOLDER));
    Files.write(dir.resolve(StorageProbe.FOLDER).resolve(GOLDEN_NAME), golden);
    assertEquals(Optional.of(GOLDEN_NONCE), StorageProbe.read(new FileStorage(dir), GOLDEN_NAME), "read from a root");
  }

  /** A copy of the root carries its identity, but not a probe written after the copy was made. */
  @Test
  void aProbeIsOnTheRootItWasWrittenToAndNotOnACopyOfIt() throws IOException {
    FileStorage root = new FileStorage(dir.resolve("root"));
    UUID id = RootIdentity.establish(root);
    Path copyDir = dir.resolve("copy");
    Files.createDirectories(copyDir);
    Files.copy(root.root().resolve(RootIdentity.FILE), copyDir.resolve(RootIdentity.FILE));
    FileStorage copy = new FileStorage(copyDir);
    assertEquals(Optional.of(id), RootIdentity.read(copy), "the copy has the root's identity");

    UUID nonce = StorageProbe.write(copy, "n2.b");
    assertEquals(Optional.of(nonce), StorageProbe.read(new FileStorage(copyDir), "n2.b"), "on the root it was written");
    assertEquals(Optional.empty(), StorageProbe.read(root, "n2.b"), "and not on the other");
    assertEquals(List.of("n2.b"), StorageProbe.names(copy));
    assertNotEquals(nonce, StorageProbe.write(copy, "n2.c"), "a nonce of its own");
    assertThrows(java.nio.file.FileAlreadyExistsException.class, () -> StorageProbe.write(copy, "n2.b"),
        "a probe is written once");

    StorageProbe.delete(copy, "n2.b");
    StorageProbe.delete(copy, "n2.b");
    assertEquals(Optional.empty(), StorageProbe.read(copy, "n2.b"));
    assertEquals(List.of("n2.c"), StorageProbe.names(copy));
    assertEquals(List.of(), StorageProbe.names(root), "no probe folder: none");
  }

  @Test
  void aDamagedProbeIsAnErrorNeverAMissingOne() throws IOException {
    FileStorage root = new FileStorage(dir);
    StorageProbe.write(root, "n1.a");
    Path file = dir.resolve(StorageProbe.FOLDER).resolve("n1.a");
    byte[] good = Files.readAllBytes(file);
    for (int i = 0; i < good.length; i++) {
      byte[] bad = good.clone();
      bad[i] ^= 0x01;
      Files.write(file, bad);
      int at = i;
      CorruptionException e = assertThrows(CorruptionException.class, () -> StorageProbe.read(root, "n1.a"),
          "byte " + at + " flipped");
      assertEquals(StorageProbe.FOLDER + "/n1.a", e.file());
    }
    Files.write(file, RootIdentity.encode(UUID.randomUUID()));
    assertThrows(CorruptionException.class, () -> StorageProbe.read(root, "n1.a"), "a root identity is not a probe");
    Files.write(file, java.util.Arrays.copyOf(good, 31));
    assertThrows(CorruptionException.class, () -> StorageProbe.read(root, "n1.a"), "a short file");
  }

  /** A probe's name comes from another node's configuration: it names a file in the probes' folder, nothing else. */
  @Test
  void aNameThatIsNotAProbesIsRefused() throws IOException {
    FileStorage root = new FileStorage(dir);
    for (String bad : List.of("", "..", "../ROOT-ID", "a/b", "/etc/passwd", "n1..a", "n 1")) {
      assertFalse(StorageProbe.isName(bad), bad);
      assertThrows(IllegalArgumentException.class, () -> StorageProbe.read(root, bad), bad);
    }
    assertTrue(StorageProbe.isName("n1.mx0pko6t-df31"));
    assertTrue(StorageProbe.isName("node_1.a"));
  }
}
