package io.tabula.persistence.backup;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tabula.persistence.storage.CorruptionException;
import io.tabula.persistence.storage.FileStorage;
import io.tabula.persistence.storage.ForwardingStorage;
import io.tabula.persistence.storage.ForwardingWritableFile;
import io.tabula.persistence.storage.Storage;
import io.tabula.persistence.storage.WritableFile;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A backup's policy files (docs/formats/backup-manifest.md, "Policy") against their golden file
 * (regenerate deliberately with {@code -Dtabula.golden.write=persistence/src/test/resources/golden/backup})
 * and against damage, versioned as expiries are; and the checked copy of a backup's file
 * between two storage roots, on real files: a good copy, a source shorter than its manifest
 * says, a destination that does not keep the bytes it was given, and a deadline.
 */
class BackupPolicyAndCopyTest {
  @TempDir
  Path dir;

  static BackupPolicy sample() {
    Map<String, List<String>> bindings = new java.util.LinkedHashMap<>();
    bindings.put("roles/bigtable.admin", List.of("user:ana@example.com"));
    bindings.put("roles/bigtable.viewer", List.of("allAuthenticatedUsers", "serviceAccount:x@example.com"));
    return new BackupPolicy(bindings);
  }

  @Test
  void thePolicyGoldenFileDecodesAndIsReproducedByteForByte() throws IOException {
    byte[] encoded = sample().encode();
    String out = System.getProperty("tabula.golden.write");
    if (out != null) {
      Files.createDirectories(Path.of(out));
      Files.write(Path.of(out, "reviewers.policy"), encoded);
      return;
    }
    byte[] golden;
    try (InputStream in = getClass().getResourceAsStream("/golden/backup/reviewers.policy")) {
      if (in == null) {
        throw new AssertionError("missing golden file golden/backup/reviewers.policy");
      }
      golden = in.readAllBytes();
    }
    assertArrayEquals(golden, encoded, "encoder output drifted from golden/backup/reviewers.policy");
    assertEquals(sample(), BackupPolicy.decode("p", golden));
    for (int i = 0; i < golden.length; i++) {
      byte[] bad = golden.clone();
      bad[i] ^= 0x01;
      assertThrows(CorruptionException.class, () -> BackupPolicy.decode("p", bad), "flipped byte " + i);
    }
    for (int n = 0; n < golden.length; n++) {
      byte[] cut = java.util.Arrays.copyOf(golden, n);
      assertThrows(CorruptionException.class, () -> BackupPolicy.decode("p", cut), "cut to " + n + " bytes");
    }
  }

  @Test
  void aPolicyChangeTakesTheNextVersionOrLosesToOneThatDidAndGoesWithTheBackup() throws IOException {
    FileStorage storage = new FileStorage(dir);
    storage.createDirectories(BackupManifestCodec.folder("b"));
    assertEquals(new BackupPolicy.Versioned(0, BackupPolicy.NONE), BackupPolicy.read(storage, "b"));
    assertTrue(BackupPolicy.write(storage, "b", 1, sample()));
    BackupPolicy later = new BackupPolicy(Map.of("roles/bigtable.reader", List.of("user:bo@example.com")));
    assertTrue(BackupPolicy.write(storage, "b", 2, later));
    assertFalse(BackupPolicy.write(storage, "b", 2, sample()), "version 2 was taken");
    assertEquals(new BackupPolicy.Versioned(2, later), BackupPolicy.read(storage, "b"));
    assertEquals(List.of("POLICY-0000000002"), storage.list("backups/b"), "older versions and temporary files go");
    BackupManifestCodec.deleteContents(storage, "b");
    assertEquals(List.of(), storage.list("backups/b"));
  }

  @Test
  void aCopyStreamsTheBytesAndChecksThemAgainstTheSource() throws IOException {
    Storage from = new FileStorage(dir.resolve("a"));
    Storage to = new FileStorage(dir.resolve("b"));
    byte[] data = new byte[BackupFileCopy.CHUNK * 2 + 12345];
    new Random(7).nextBytes(data);
    try (WritableFile f = from.create("tables/t/t-1/000001.sst")) {
      f.append(data);
    }
    BackupFileCopy.Copied c = BackupFileCopy.copy(from, "tables/t/t-1/000001.sst", data.length, to,
        "tables/t/copy-1/000001.sst", System::nanoTime, System.nanoTime() + 60_000_000_000L);
    CRC32C crc = new CRC32C();
    crc.update(data);
    assertEquals(new BackupFileCopy.Copied(data.length, (int) crc.getValue()), c);
    assertArrayEquals(data, Files.readAllBytes(dir.resolve("b/tables/t/copy-1/000001.sst")));

    BackupFileCopy.CopyFailedException shorter = assertThrows(BackupFileCopy.CopyFailedException.class,
        () -> BackupFileCopy.copy(from, "tables/t/t-1/000001.sst", data.length + 1, to, "tables/t/copy-1/x.sst",
            System::nanoTime, System.nanoTime() + 60_000_000_000L));
    assertEquals(BackupFileCopy.Problem.SOURCE_LENGTH, shorter.problem());

    // A destination that flips a bit of what it is given: the bytes read back do not match.
    Storage flipping = new ForwardingStorage(to) {
      @Override
      public WritableFile create(String path) throws IOException {
        return new ForwardingWritableFile(delegate.create(path)) {
          @Override
          public void append(byte[] b, int off, int len) throws IOException {
            byte[] copy = java.util.Arrays.copyOfRange(b, off, off + len);
            copy[len / 2] ^= 0x10;
            super.append(copy, 0, len);
          }
        };
      }
    };
    BackupFileCopy.CopyFailedException mismatch = assertThrows(BackupFileCopy.CopyFailedException.class,
        () -> BackupFileCopy.copy(from, "tables/t/t-1/000001.sst", data.length, flipping, "tables/t/copy-1/y.sst",
            System::nanoTime, System.nanoTime() + 60_000_000_000L));
    assertEquals(BackupFileCopy.Problem.CHECKSUM, mismatch.problem());

    BackupFileCopy.CopyFailedException late = assertThrows(BackupFileCopy.CopyFailedException.class,
        () -> BackupFileCopy.copy(from, "tables/t/t-1/000001.sst", data.length, to, "tables/t/copy-1/z.sst",
            System::nanoTime, System.nanoTime() - 1));
    assertEquals(BackupFileCopy.Problem.DEADLINE, late.problem());
  }
}
