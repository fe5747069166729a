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
 * records, the fourth of which took the server time (its payload carries that time apart from
 * the cells' timestamps). The version 1 segment, written before segments were prepared and
 * before payloads carried server times, must still replay to the first three.
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

  /** A server time: 2023-11-14T22:13:20.123Z. */
  private static final long SERVER_TIME = 1_700_000_000_123_000L;

  /**
   * Five records, each acknowledged before the next is sent: five batches. In the fourth, the
   * first cell took the server time and the second has a client's timestamp; the fifth merges
   * 42 into a cell of an aggregate family (how an AddToCell is logged), with an idempotency
   * token that took the server time.
   */
  static List<Object[]> records() {
    return List.of(
        new Object[] {"t1", 1L, logged(RowMutation.of(b("com.cnn.www"), new Mutation.SetCell("contents", b(""),
            3_000_000L, b("<html>"))))},
        new Object[] {"t1", 2L, logged(RowMutation.of(b("com.cnn.www"), new Mutation.SetCell("anchor", b("cnnsi.com"),
            9_000_000L, b("CNN")), Mutation.DeleteFromColumn.allVersions("anchor", b("my.look.ca"))))},
        new Object[] {"t2", 7L, logged(RowMutation.of(b("org.example"), new Mutation.DeleteFromFamily("anchor"),
            Mutation.DeleteFromRow.INSTANCE))},
        new Object[] {"t1", 4L, new MutationCodec.Logged(RowMutation.of(b("com.cnn.www"),
            new Mutation.SetCell("contents", b(""), SERVER_TIME, b("<html>2")),
            new Mutation.SetCell("anchor", b("cnnsi.com"), 9_500_000L, b("CNN Sports"))), SERVER_TIME)},
        new Object[] {"t3", 1L, new MutationCodec.Logged(RowMutation.of(b("com.cnn.www"),
            new Mutation.MergeToCell("visits", b("day"), 86_400_000_000L, new byte[] {0, 0, 0, 0, 0, 0, 0, 42}),
            new Mutation.Token(b("retry-token-1"), SERVER_TIME)), SERVER_TIME)});
  }

  private static MutationCodec.Logged logged(RowMutation rm) {
    return new MutationCodec.Logged(rm, MutationCodec.Logged.NO_SERVER_TIME);
  }

  private static byte[] write(Path root, boolean prepared) throws IOException, InterruptedException {
    FileStorage storage = new FileStorage(root);
    try (CommitLog log = CommitLog.open(storage, "logs", new CommitLogOptions(4096, Durability.FSYNC, prepared))) {
      if (prepared) {
        assertTrue(log.awaitPreparedSegment(30_000), "segment 1 prepared");
      }
      for (Object[] r : records()) {
        MutationCodec.Logged payload = (MutationCodec.Logged) r[2];
        log.append((String) r[0], (Long) r[1], out -> MutationCodec.encodeTo(payload, out)).join();
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
    assertReplays(golden, records());
  }

  @Test
  void versionOneSegmentStillReplays() throws IOException {
    assertReplays(golden("000001.log"), records().subList(0, 3));
  }

  private void assertReplays(byte[] golden, List<Object[]> want) throws IOException {
    Path copy = Files.createTempDirectory(dir, "copy");
    Files.createDirectories(copy.resolve("logs"));
    Files.write(copy.resolve("logs/000001.log"), golden);
    List<Object[]> got = new ArrayList<>();
    try (CommitLog log = CommitLog.open(new FileStorage(copy), "logs", CommitLogOptions.defaults())) {
      ReplayResult r = log.replay((t, s, p) -> got.add(new Object[] {t, s,
          MutationCodec.decodeLogged(ByteBuffer.wrap(p))}));
      assertEquals(want.size(), r.records());
      assertEquals(true, r.clean());
    }
    assertEquals(want.size(), got.size());
    for (int i = 0; i < want.size(); i++) {
      assertEquals(want.get(i)[0], got.get(i)[0]);
      assertEquals(want.get(i)[1], got.get(i)[1]);
      MutationCodec.Logged a = (MutationCodec.Logged) want.get(i)[2];
      MutationCodec.Logged c = (MutationCodec.Logged) got.get(i)[2];
      assertEquals(a.serverTime(), c.serverTime(), "the server time of record " + i);
      assertArrayEquals(a.mutation().row(), c.mutation().row());
      assertEquals(a.mutation().mutations().toString(), c.mutation().mutations().toString());
    }
  }
}
