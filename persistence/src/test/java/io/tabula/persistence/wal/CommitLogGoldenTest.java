package io.tabula.persistence.wal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tabula.persistence.encoding.MutationCodec;
import io.tabula.persistence.model.Mutation;
import io.tabula.persistence.model.RowMutation;
import io.tabula.persistence.storage.FileStorage;
import io.tabula.persistence.storage.ReadableFile;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The commit-log format pinned by golden segments. The version 2 segment ({@code v2/}) is a
 * prepared one of 4 KiB: the writer must reproduce it byte for byte, zeros included, and a
 * plain segment must be the same bytes without the zeros; it must replay to the expected
 * records. The version 1 segment, written before segments were prepared, must still replay.
 * After a deliberate format change, regenerate the current version with
 * {@code -Dtabula.golden.write=persistence/src/test/resources/golden/commitlog/v2} and update
 * docs/formats/commitlog.md's worked example.
 */
class CommitLogGoldenTest {
  @TempDir
  Path dir;

  private static byte[] b(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  /** Three records, each acknowledged before the next is sent: three batches. */
  static List<Object[]> records() {
    return List.of(
        new Object[] {"t1", 1L, RowMutation.of(b("com.cnn.www"), new Mutation.SetCell("contents", b(""), 3_000_000L,
            b("<html>")))},
        new Object[] {"t1", 2L, RowMutation.of(b("com.cnn.www"), new Mutation.SetCell("anchor", b("cnnsi.com"),
            9_000_000L, b("CNN")), Mutation.DeleteFromColumn.allVersions("anchor", b("my.look.ca")))},
        new Object[] {"t2", 7L, RowMutation.of(b("org.example"), new Mutation.DeleteFromFamily("anchor"),
            Mutation.DeleteFromRow.INSTANCE)});
  }

  private static byte[] write(Path root, boolean prepared) throws IOException, InterruptedException {
    FileStorage storage = new FileStorage(root);
    try (CommitLog log = CommitLog.open(storage, "logs", new CommitLogOptions(4096, Durability.FSYNC, prepared))) {
      if (prepared) {
        assertTrue(log.awaitPreparedSegment(30_000), "segment 1 prepared");
      }
      for (Object[] r : records()) {
        log.append((String) r[0], (Long) r[1], MutationCodec.encode((RowMutation) r[2])).join();
      }
    }
    try (ReadableFile f = storage.open("logs/000001.log")) {
      return f.readFully(0, (int) f.size());
    }
  }

  private byte[] golden(String name) throws IOException {
    try (InputStream in = getClass().getResourceAsStream("/golden/commitlog/" + name)) {
      if (in == null) {
        throw new AssertionError("missing golden file golden/commitlog/" + name);
      }
      return in.readAllBytes();
    }
  }

  @Test
  void goldenSegmentIsReproducedByteForBytePreparedOrPlain() throws Exception {
    byte[] prepared = write(dir.resolve("prepared"), true);
    String out = System.getProperty("tabula.golden.write");
    if (out != null) {
      Files.createDirectories(Path.of(out));
      Files.write(Path.of(out, "000001.log"), prepared);
      return;
    }
    byte[] golden = golden("v2/000001.log");
    assertEquals(4096, golden.length, "a prepared segment, written in place");
    assertArrayEquals(golden, prepared, "the commit-log writer's output drifted from golden/commitlog/v2/000001.log");
    byte[] plain = write(dir.resolve("plain"), false);
    assertArrayEquals(Arrays.copyOf(golden, plain.length), plain, "a plain segment is the same batches");
    for (int i = plain.length; i < golden.length; i++) {
      assertEquals(0, golden[i], "after the batches, only zeros");
    }
    assertReplays(golden);
  }

  @Test
  void versionOneSegmentStillReplays() throws IOException {
    assertReplays(golden("000001.log"));
  }

  private void assertReplays(byte[] golden) throws IOException {
    Path copy = Files.createTempDirectory(dir, "copy");
    Files.createDirectories(copy.resolve("logs"));
    Files.write(copy.resolve("logs/000001.log"), golden);
    List<Object[]> got = new ArrayList<>();
    try (CommitLog log = CommitLog.open(new FileStorage(copy), "logs", CommitLogOptions.defaults())) {
      ReplayResult r = log.replay((t, s, p) -> got.add(new Object[] {t, s, MutationCodec.decode(ByteBuffer.wrap(p))}));
      assertEquals(3, r.records());
      assertEquals(true, r.clean());
    }
    List<Object[]> want = records();
    assertEquals(want.size(), got.size());
    for (int i = 0; i < want.size(); i++) {
      assertEquals(want.get(i)[0], got.get(i)[0]);
      assertEquals(want.get(i)[1], got.get(i)[1]);
      RowMutation a = (RowMutation) want.get(i)[2];
      RowMutation c = (RowMutation) got.get(i)[2];
      assertArrayEquals(a.row(), c.row());
      assertEquals(a.mutations().toString(), c.mutations().toString());
    }
  }
}
