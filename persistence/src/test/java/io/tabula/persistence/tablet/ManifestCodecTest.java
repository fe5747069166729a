package io.tabula.persistence.tablet;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.tabula.persistence.storage.CorruptionException;
import io.tabula.persistence.storage.FileStorage;
import io.tabula.persistence.storage.ForwardingStorage;
import io.tabula.persistence.storage.Storage;
import io.tabula.persistence.storage.WritableFile;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The manifest format against golden files (format drift fails the build) and against
 * damage. The files of the current version ({@code golden/manifest/v2/}) must be reproduced
 * byte for byte; those of version 1 ({@code golden/manifest/}, without {@code maxServerTime})
 * must still be read. Regenerate the current version's files after a deliberate format change
 * with {@code -Dtabula.golden.write=persistence/src/test/resources/golden/manifest/v2} and update
 * docs/formats/manifest.md's worked example.
 */
class ManifestCodecTest {
  @TempDir
  Path root;
  private static byte[] b(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  static TabletManifest fresh() {
    return TabletManifest.empty("model", "t0", new byte[0], new byte[0]);
  }

  /** The highest server time of the golden manifest with files: 2023-11-14T22:13:20.123Z. */
  private static final long SERVER_TIME = 1_700_000_000_123_000L;

  static TabletManifest withFiles() {
    return withFiles(SERVER_TIME);
  }

  private static TabletManifest withFiles(long maxServerTime) {
    return new TabletManifest("webtable", "t7", b("com.cnn"), b("com.google"), TabletManifest.State.ACTIVE, 4711,
        4800, maxServerTime, 4, Map.of("default", List.of(new TabletManifest.FileRef("tables/webtable/t7/000003.sst", true),
            new TabletManifest.FileRef("tables/webtable/t1/000009.sst", false)),
            "anchor", List.of(new TabletManifest.FileRef("tables/webtable/t7/000002.sst", true))), null);
  }

  static TabletManifest split() {
    return split(SERVER_TIME);
  }

  private static TabletManifest split(long maxServerTime) {
    return withFiles(maxServerTime).asSplit(new TabletManifest.SplitInfo(b("com.example"), "t8", "t9"));
  }

  private static final Map<String, TabletManifest> GOLDEN = Map.of("fresh.manifest", fresh(), "files.manifest",
      withFiles(), "split.manifest", split());

  /** The files of version 1, each as it reads now: no server time known. */
  private static final Map<String, TabletManifest> GOLDEN_V1 = Map.of("fresh.manifest", fresh(), "files.manifest",
      withFiles(0), "split.manifest", split(0));

  @Test
  void goldenFilesDecodeAndAreReproducedByteForByte() throws IOException {
    String out = System.getProperty("tabula.golden.write");
    if (out != null) {
      Files.createDirectories(Path.of(out));
      for (Map.Entry<String, TabletManifest> g : GOLDEN.entrySet()) {
        Files.write(Path.of(out, g.getKey()), ManifestCodec.encode(g.getValue()));
      }
      return;
    }
    for (Map.Entry<String, TabletManifest> g : GOLDEN.entrySet()) {
      byte[] golden = golden("v2/" + g.getKey());
      assertEquals(g.getValue(), ManifestCodec.decode(g.getKey(), golden));
      assertArrayEquals(golden, ManifestCodec.encode(g.getValue()),
          "encoder output drifted from golden/manifest/v2/" + g.getKey());
    }
  }

  @Test
  void versionOneGoldenFilesStillDecodeWithNoServerTime() throws IOException {
    for (Map.Entry<String, TabletManifest> g : GOLDEN_V1.entrySet()) {
      byte[] golden = golden(g.getKey());
      assertEquals(1, ByteBuffer.wrap(golden).getInt(ManifestFormat.VERSION_OFFSET), g.getKey());
      assertEquals(g.getValue(), ManifestCodec.decode(g.getKey(), golden));
    }
  }

  private byte[] golden(String name) throws IOException {
    try (InputStream in = getClass().getResourceAsStream("/golden/manifest/" + name)) {
      if (in == null) {
        throw new AssertionError("missing golden file golden/manifest/" + name);
      }
      return in.readAllBytes();
    }
  }

  @Test
  void splitChildrenShareEveryParentFile() {
    List<TabletManifest> kids = split().children();
    assertEquals("t8", kids.get(0).tabletId());
    assertArrayEquals(b("com.cnn"), kids.get(0).startRow());
    assertArrayEquals(b("com.example"), kids.get(0).endRow());
    assertArrayEquals(b("com.example"), kids.get(1).startRow());
    assertArrayEquals(b("com.google"), kids.get(1).endRow());
    for (TabletManifest k : kids) {
      assertEquals(4800, k.redoPoint());
      assertEquals(SERVER_TIME, k.maxServerTime(), "a child carries on the parent's server times");
      assertEquals(3, k.groups().values().stream().mapToLong(List::size).sum());
      k.groups().values().forEach(l -> l.forEach(f -> assertEquals(false, f.owned())));
    }
  }

  @Test
  void everyFlippedByteIsCaught() {
    byte[] good = ManifestCodec.encode(split());
    for (int i = 0; i < good.length; i++) {
      byte[] bad = good.clone();
      bad[i] ^= 0x01;
      int at = i;
      CorruptionException e = assertThrows(CorruptionException.class, () -> ManifestCodec.decode("M", bad),
          "flip at offset " + at);
      assertEquals("M", e.file());
    }
  }

  @Test
  void truncationIsCaught() {
    byte[] good = ManifestCodec.encode(withFiles());
    for (int n : new int[] {0, 7, 19, 20, good.length - 1}) {
      byte[] cut = java.util.Arrays.copyOf(good, n);
      assertThrows(CorruptionException.class, () -> ManifestCodec.decode("M", cut), "cut at " + n);
    }
  }

  @Test
  void versionsFenceAStaleWriterAndAManifestFromBeforeVersionsIsReadAsVersionZero() throws IOException {
    Storage storage = new FileStorage(root);
    String dir = "tables/webtable/t7";
    // A folder written before versions: its one MANIFEST is version 0.
    Files.createDirectories(root.resolve(dir));
    Files.write(root.resolve(dir).resolve("MANIFEST"), ManifestCodec.encode(fresh()));
    assertEquals(new ManifestCodec.Versioned(fresh(), 0), ManifestCodec.readVersioned(storage, dir));

    // Owner A holds version 0; owner B opens the tablet (claims 1) and commits twice (2, 3).
    ManifestCodec.Versioned b = ManifestCodec.claim(storage, dir);
    assertEquals(1, b.version());
    assertEquals(List.of("MANIFEST-0000000001"), storage.list(dir), "the old file went with the claim");
    long bv = ManifestCodec.commit(storage, dir, withFiles(), b.version());
    bv = ManifestCodec.commit(storage, dir, withFiles(), bv);
    assertEquals(3, bv);
    assertEquals(List.of("MANIFEST-0000000003"), storage.list(dir));

    // A resumes: version 1 is free again (deleted), so A publishes it, but a newer one exists:
    // refused too, typed apart, since A cannot tell whether a claim adopted its version.
    assertThrows(ManifestSupersededException.class, () -> ManifestCodec.commit(storage, dir, split(), 0));
    // A writer that asks for a version that exists is refused at the link: nothing published.
    assertThrows(ManifestConflictException.class, () -> ManifestCodec.commit(storage, dir, split(), 2));
    assertEquals(new ManifestCodec.Versioned(withFiles(), 3), ManifestCodec.readVersioned(storage, dir));
    assertEquals(List.of("MANIFEST-0000000003"), storage.list(dir), "the refused writers left nothing behind");
  }

  /**
   * A failure at or after the link that publishes a version leaves its outcome unknown, typed
   * apart from a refusal: here the folder's sync fails after the link, and the version is in
   * fact published (the next reader takes it). A failure before the link publishes nothing.
   */
  @Test
  void aFailureAfterTheLinkLeavesTheOutcomeUnknownAndOneBeforeItPublishesNothing() throws IOException {
    String dir = "tables/webtable/t7";
    boolean[] failSync = {true};
    boolean[] failCreate = {false};
    Storage storage = new ForwardingStorage(new FileStorage(root)) {
      @Override
      public WritableFile create(String path) throws IOException {
        if (failCreate[0]) {
          throw new IOException("injected: no space left");
        }
        return delegate.create(path);
      }

      @Override
      public void syncDirectory(String d) throws IOException {
        if (failSync[0]) {
          throw new IOException("injected: syncing " + d + " failed");
        }
        delegate.syncDirectory(d);
      }
    };
    ManifestOutcomeUnknownException unknown = assertThrows(ManifestOutcomeUnknownException.class,
        () -> ManifestCodec.commit(storage, dir, fresh(), 0));
    assertEquals("injected: syncing " + dir + " failed", unknown.getCause().getMessage());
    assertEquals(new ManifestCodec.Versioned(fresh(), 1), ManifestCodec.readVersioned(storage, dir));

    failSync[0] = false;
    failCreate[0] = true;
    IOException before = assertThrows(IOException.class, () -> ManifestCodec.commit(storage, dir, withFiles(), 1));
    assertFalse(before instanceof ManifestMaybeAdoptedException, "nothing was published: " + before);
    assertEquals(new ManifestCodec.Versioned(fresh(), 1), ManifestCodec.readVersioned(storage, dir));
  }

  /**
   * A new tablet's first manifest is written only if it has none: a former owner finishing a
   * split it began before it froze gets the children's manifests as the next owners left them.
   */
  @Test
  void creatingAManifestThatExistsWritesNothingAndReturnsTheNewest() throws IOException {
    Storage storage = new FileStorage(root);
    String dir = "tables/webtable/t8";
    assertEquals(new ManifestCodec.Versioned(fresh(), 1), ManifestCodec.create(storage, dir, fresh()));
    long v = ManifestCodec.commit(storage, dir, withFiles(), 1); // its owner flushed
    assertEquals(new ManifestCodec.Versioned(withFiles(), v), ManifestCodec.create(storage, dir, fresh()),
        "the late creator gets the owner's manifest back");
    assertEquals(List.of("MANIFEST-0000000002"), storage.list(dir), "and wrote nothing");
  }
}
