package io.tabula.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Instant;
import java.util.List;
import java.util.Set;
import jdk.jfr.Recording;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@link JfrDigest} over a real flight recording of this JVM: file syncs and CPU land in the windows they happened in. */
class JfrDigestTest {
  @TempDir
  Path dir;

  @Test
  void syncsAndSamplesFallInTheirWindows() throws Exception {
    Path recording = dir.resolve("test.jfr");
    Instant firstStart;
    Instant firstEnd;
    Instant secondStart;
    Instant secondEnd;
    try (Recording r = JfrDigest.startRecording();
         FileChannel ch = FileChannel.open(dir.resolve("probe"), StandardOpenOption.CREATE, StandardOpenOption.WRITE)) {
      firstStart = Instant.now();
      for (int i = 0; i < 7; i++) {
        ch.write(ByteBuffer.allocate(64));
        ch.force(false);
      }
      firstEnd = Instant.now();
      Thread.sleep(20);
      secondStart = Instant.now();
      long busyUntil = System.nanoTime() + 2_000_000_000L;
      long sum = 0;
      byte[] bytes = new byte[4096];
      while (System.nanoTime() < busyUntil) {
        bytes[(int) (sum & 4095)]++;
        sum += java.util.Arrays.hashCode(bytes); // a JDK frame under this test's own
      }
      secondEnd = Instant.now();
      assertTrue(sum != 1, "keeps the loop");
      r.stop();
      r.dump(recording);
    }
    List<JfrDigest.Digest> digests = JfrDigest.digest(recording, List.of(
        new JfrDigest.Window("syncs", firstStart, firstEnd), new JfrDigest.Window("busy", secondStart, secondEnd)));
    assertEquals(7, digests.get(0).syncs().length, "every sync of the first window, whatever its length");
    assertEquals(0, digests.get(1).syncs().length);
    String syncer = Thread.currentThread().getName().replaceAll("[-#]?\\d+$", "");
    assertEquals(Set.of(syncer), digests.get(0).syncMillisByThread.keySet(), "the syncs are this thread's");
    assertTrue(digests.get(0).row().contains("; " + syncer + " "), digests.get(0).row());
    // Sampled every 10 ms (about 190 here alone); a loop whose frames the sampler cannot walk
    // (one that only calls intrinsics) gave 6, hence the JDK call in the loop.
    assertTrue(digests.get(1).samples >= 20, "a busy thread is sampled: " + digests.get(1).samples);
    assertTrue(digests.get(1).byLayer.keySet().stream().anyMatch(l -> l.startsWith("io.tabula.bench")),
        "the busy loop's own code: " + digests.get(1).byLayer);
    String row = digests.get(1).row();
    assertTrue(row.startsWith("| busy | "), row);
    assertEquals(JfrDigest.HEADER.lines().findFirst().orElseThrow().split("\\|", -1).length,
        row.split("\\|", -1).length, "as many columns as the header");
    assertTrue(Files.size(recording) > 0);
  }
}
