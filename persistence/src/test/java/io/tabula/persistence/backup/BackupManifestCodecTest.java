package io.tabula.persistence.backup;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.tabula.persistence.schema.Aggregator;
import io.tabula.persistence.schema.ColumnFamily;
import io.tabula.persistence.schema.GcPolicy;
import io.tabula.persistence.schema.LocalityGroup;
import io.tabula.persistence.schema.TableSchema;
import io.tabula.persistence.sstable.Compression;
import io.tabula.persistence.storage.CorruptionException;
import io.tabula.persistence.storage.FileStorage;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The backup manifest format (docs/formats/backup-manifest.md) against its golden file (drift
 * fails the build; regenerate deliberately with {@code
 * -Dtabula.golden.write=persistence/src/test/resources/golden/backup} and say why), against
 * damage (every flipped byte and every truncation is a {@link CorruptionException}), and
 * written to and read from real files.
 */
class BackupManifestCodecTest {
  @TempDir
  Path dir;

  private static byte[] b(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  /** Two tablets of table "webtable" split at "com.m", two groups, every kind of GC rule, an aggregate family. */
  static BackupManifest sample() {
    TableSchema schema = TableSchema.of(List.of(
        new ColumnFamily("anchor", GcPolicy.union(GcPolicy.maxVersions(2), GcPolicy.maxAgeMicros(86_400_000_000L)),
            "default"),
        new ColumnFamily("contents", GcPolicy.maxVersions(3), "default"),
        new ColumnFamily("language", GcPolicy.intersection(GcPolicy.maxVersions(1), GcPolicy.maxAgeMicros(1_000_000)),
            "small"),
        new ColumnFamily("raw", GcPolicy.KEEP_ALL, "small"),
        new ColumnFamily("visits", GcPolicy.maxVersions(30), "default", Aggregator.SUM)),
        List.of(new LocalityGroup("small", 4096, Compression.LZ4, 10, true), LocalityGroup.defaults("default")));
    return new BackupManifest("nightly-1", "webtable", 1_700_000_000_000_000L, 1_700_000_000_123_456L, true, schema,
        List.of(
        new BackupManifest.TabletFiles(new byte[0], b("com.m"), Map.of(
            "default", List.of(new BackupManifest.FileEntry("tables/webtable/webtable-1/000007.sst", 1_048_576),
                new BackupManifest.FileEntry("tables/webtable/webtable-1/000003.sst", 65_536)),
            "small", List.of(new BackupManifest.FileEntry("tables/webtable/webtable-1/000006.sst", 4_096))), 4_800,
            1_700_000_000_100_000L),
        new BackupManifest.TabletFiles(b("com.m"), new byte[0], Map.of(
            "default", List.of(new BackupManifest.FileEntry("tables/webtable/webtable-2/000002.sst", 2_000_000))), 312,
            1_700_000_000_123_000L)), "projects/p/instances/other/clusters/c1/backups/nightly-0");
  }

  @Test
  void theGoldenFileDecodesAndIsReproducedByteForByte() throws IOException {
    byte[] encoded = BackupManifestCodec.encode(sample());
    String out = System.getProperty("tabula.golden.write");
    if (out != null) {
      Files.createDirectories(Path.of(out));
      Files.write(Path.of(out, "nightly.manifest"), encoded);
      return;
    }
    byte[] golden;
    try (InputStream in = getClass().getResourceAsStream("/golden/backup/nightly.manifest")) {
      if (in == null) {
        throw new AssertionError("missing golden file golden/backup/nightly.manifest");
      }
      golden = in.readAllBytes();
    }
    assertArrayEquals(golden, encoded, "encoder output drifted from golden/backup/nightly.manifest");
    BackupManifest back = BackupManifestCodec.decode("nightly.manifest", golden);
    assertEquals("nightly-1", back.backupId());
    assertEquals("webtable", back.sourceTable());
    assertEquals(1_700_000_000_000_000L, back.startMicros());
    assertEquals(1_700_000_000_123_456L, back.snapshotMicros());
    assertEquals(true, back.hot());
    assertEquals("projects/p/instances/other/clusters/c1/backups/nightly-0", back.sourceBackup());
    assertEquals(sample().schema().families(), back.schema().families());
    assertEquals(sample().schema().group("small"), back.schema().group("small"));
    assertEquals(2, back.tablets().size());
    assertArrayEquals(b("com.m"), back.tablets().get(0).endRow());
    assertArrayEquals(b("com.m"), back.tablets().get(1).startRow());
    assertEquals(4_800, back.tablets().get(0).lastSequence());
    assertEquals(1_700_000_000_123_000L, back.tablets().get(1).maxServerTime());
    assertEquals(Set.of("tables/webtable/webtable-1/000007.sst", "tables/webtable/webtable-1/000003.sst",
        "tables/webtable/webtable-1/000006.sst", "tables/webtable/webtable-2/000002.sst"), back.paths());
    assertEquals(1_048_576 + 65_536 + 4_096 + 2_000_000, back.bytes());
    assertArrayEquals(golden, BackupManifestCodec.encode(back), "what reads back writes the same bytes");
  }

  /**
   * A manifest of version 2, written before a copy named its source backup, reads as the same
   * backup made from its table.
   */
  @Test
  void versionTwoStillDecodes() throws IOException {
    byte[] golden;
    try (InputStream in = getClass().getResourceAsStream("/golden/backup/nightly-v2.manifest")) {
      golden = in.readAllBytes();
    }
    BackupManifest back = BackupManifestCodec.decode("nightly-v2.manifest", golden);
    assertEquals(sample().schema().families(), back.schema().families());
    assertEquals("", back.sourceBackup());
    assertEquals(sample().paths(), back.paths());
  }

  /**
   * A manifest of version 1, written before families carried their aggregator, reads as the
   * same backup with every family of raw values (no aggregate family existed then).
   */
  @Test
  void versionOneStillDecodes() throws IOException {
    byte[] golden;
    try (InputStream in = getClass().getResourceAsStream("/golden/backup/nightly-v1.manifest")) {
      golden = in.readAllBytes();
    }
    BackupManifest back = BackupManifestCodec.decode("nightly-v1.manifest", golden);
    Map<String, ColumnFamily> expected = new java.util.HashMap<>(sample().schema().families());
    expected.remove("visits");
    assertEquals(expected, back.schema().families());
    assertEquals(sample().paths(), back.paths());
  }

  @Test
  void everyFlippedByteAndEveryTruncationIsCorruption() {
    byte[] good = BackupManifestCodec.encode(sample());
    for (int i = 0; i < good.length; i++) {
      byte[] bad = good.clone();
      bad[i] ^= 0x01;
      assertThrows(CorruptionException.class, () -> BackupManifestCodec.decode("m", bad), "flipped byte " + i);
    }
    for (int n = 0; n < good.length; n++) {
      byte[] cut = java.util.Arrays.copyOf(good, n);
      assertThrows(CorruptionException.class, () -> BackupManifestCodec.decode("m", cut), "cut to " + n + " bytes");
    }
  }

  @Test
  void anExpiryIsThirtyTwoBytesAndAChangeTakesTheNextVersionOrLosesToOneThatDid() throws IOException {
    BackupExpiry e = new BackupExpiry(1_700_086_400_000_000L, 0);
    assertEquals("54424c4142455850" + "00000001" + "00060a3835f5a000" + "0000000000000000" + "b8f8d143",
        java.util.HexFormat.of().formatHex(e.encode()));
    byte[] good = e.encode();
    for (int i = 0; i < good.length; i++) {
      byte[] bad = good.clone();
      bad[i] ^= 0x01;
      assertThrows(CorruptionException.class, () -> BackupExpiry.decode("e", bad), "flipped byte " + i);
    }
    FileStorage storage = new FileStorage(dir);
    storage.createDirectories(BackupManifestCodec.folder("b"));
    assertThrows(java.nio.file.NoSuchFileException.class, () -> BackupExpiry.read(storage, "b"));
    assertEquals(true, BackupExpiry.write(storage, "b", 1, e));
    BackupExpiry later = new BackupExpiry(1_700_172_800_000_000L, 1_700_000_000_000_000L);
    assertEquals(true, BackupExpiry.write(storage, "b", 2, later));
    assertEquals(false, BackupExpiry.write(storage, "b", 2, e), "version 2 was taken");
    assertEquals(new BackupExpiry.Versioned(2, later), BackupExpiry.read(storage, "b"));
    assertEquals(List.of("EXPIRY-0000000002"), BackupExpiry.versions(storage.list(BackupManifestCodec.folder("b"))),
        "older versions and the losing write's temporary file are gone: " + storage.list("backups/b"));
  }

  @Test
  void aWrittenManifestIsReadBackListedAndNeverOverwritten() throws IOException {
    FileStorage storage = new FileStorage(dir);
    assertEquals(List.of(), BackupManifestCodec.ids(storage));
    BackupManifestCodec.write(storage, sample());
    assertEquals(List.of("nightly-1"), BackupManifestCodec.ids(storage));
    assertArrayEquals(BackupManifestCodec.encode(sample()),
        BackupManifestCodec.encode(BackupManifestCodec.read(storage, "nightly-1")));
    assertThrows(java.nio.file.FileAlreadyExistsException.class, () -> BackupManifestCodec.write(storage, sample()));
    assertEquals(List.of("MANIFEST"), storage.list("backups/nightly-1"), "no temporary file is left");
    // A folder without a manifest is a backup being made: not listed.
    storage.createDirectories("backups/half-made");
    assertEquals(List.of("nightly-1"), BackupManifestCodec.ids(storage));
  }
}
