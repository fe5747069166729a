package io.tabula.persistence.changes;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.tabula.persistence.model.Mutation;
import io.tabula.persistence.model.RowMutation;
import io.tabula.persistence.storage.CorruptionException;
import io.tabula.persistence.storage.FileStorage;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The change log's on-disk format (docs/formats/change-log.md): golden files decode and are
 * reproduced byte for byte; a flipped byte anywhere in a record is caught.
 */
class ChangeLogFormatTest {
  @TempDir
  Path dir;

  private static byte[] b(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  static List<Change> changes() {
    return List.of(
        new Change(7, 1_700_000_000_123_000L, RowMutation.of(b("com.example/a"),
            new Mutation.SetCell("f", b("q"), 1_700_000_000_123_000L, b("value")),
            new Mutation.Token(b("token-01"), 1_700_000_000_123_000L))),
        new Change(9, 1_700_000_000_124_000L, RowMutation.of(b("com.example/b"),
            new Mutation.DeleteFromColumn("f", b("q"), 1000, 2000), new Mutation.DeleteFromFamily("g"))),
        new Change(11, 1_700_000_000_124_000L, RowMutation.of(b("com.example/c"), Mutation.DeleteFromRow.INSTANCE)),
        new Change(12, 1_700_000_000_125_000L, RowMutation.of(b("com.example/d"),
            new Mutation.MergeToCell("sum", b("n"), 0, new byte[] {0, 0, 0, 0, 0, 0, 0, 5}))));
  }

  private static final ChangeLog.Merged MERGED = new ChangeLog.Merged("t-9", b("com.cnn"), new byte[0], 4800);

  @Test
  void goldenFilesDecodeAndAreReproducedByteForByte() throws IOException {
    FileStorage storage = new FileStorage(dir);
    ChangeLog.Segment s = ChangeLog.write(storage, "changes", changes());
    assertEquals("changes/00000000000000000007-00000000000000000012-00001700000000125000.chg", s.path());
    ChangeLog.writeMerged(storage, "changes", MERGED);
    byte[] segment = Files.readAllBytes(dir.resolve(s.path()));
    byte[] marker = Files.readAllBytes(dir.resolve("changes/MERGED"));
    String out = System.getProperty("tabula.golden.write");
    if (out != null) {
      Files.createDirectories(Path.of(out));
      Files.write(Path.of(out, "segment.chg"), segment);
      Files.write(Path.of(out, "MERGED"), marker);
      return;
    }
    assertArrayEquals(golden("segment.chg"), segment, "the writer drifted from golden/changes/segment.chg");
    assertArrayEquals(golden("MERGED"), marker, "the writer drifted from golden/changes/MERGED");
    Files.createDirectories(dir.resolve("old"));
    Files.write(dir.resolve("old/" + Path.of(s.path()).getFileName()), golden("segment.chg"));
    Files.write(dir.resolve("old/MERGED"), golden("MERGED"));
    assertEquals(changes().stream().map(ChangeLogFormatTest::show).toList(), read(storage, "old"));
    ChangeLog.Merged m = ChangeLog.readMerged(storage, "old");
    assertEquals(MERGED.childId(), m.childId());
    assertArrayEquals(MERGED.startRow(), m.startRow());
    assertEquals(MERGED.startsAfter(), m.startsAfter());
  }

  private static List<String> read(FileStorage storage, String folder) throws IOException {
    List<String> out = new ArrayList<>();
    for (Change c : ChangeLog.readAfter(storage, folder, 0, Long.MAX_VALUE, null).changes()) {
      out.add(show(c));
    }
    return out;
  }

  private static String show(Change c) {
    return c.sequence() + "@" + c.commitMicros() + " " + new String(c.mutation().row(), StandardCharsets.UTF_8) + " "
        + c.mutation().mutations();
  }

  @Test
  void everyFlippedByteIsCaught() throws IOException {
    FileStorage storage = new FileStorage(dir);
    ChangeLog.Segment s = ChangeLog.write(storage, "changes", changes());
    byte[] good = Files.readAllBytes(dir.resolve(s.path()));
    for (int i = 0; i < good.length; i++) {
      byte[] bad = good.clone();
      bad[i] ^= 0x01;
      Files.write(dir.resolve(s.path()), bad);
      int at = i;
      assertThrows(CorruptionException.class, () -> read(storage, "changes"), () -> "a flip at byte " + at);
    }
  }

  private byte[] golden(String name) throws IOException {
    try (InputStream in = getClass().getResourceAsStream("/golden/changes/" + name)) {
      if (in == null) {
        throw new AssertionError("missing golden file golden/changes/" + name);
      }
      return in.readAllBytes();
    }
  }
}
