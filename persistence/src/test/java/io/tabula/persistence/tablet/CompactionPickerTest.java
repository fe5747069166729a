package io.tabula.persistence.tablet;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class CompactionPickerTest {
  private static final long MB = 1 << 20;

  @Test
  void nothingWithinTheBound() {
    assertNull(CompactionPicker.pick(new long[] {MB, MB, MB}, 3));
  }

  private static byte[] r(String row) {
    return row.getBytes(java.nio.charset.StandardCharsets.UTF_8);
  }

  @Test
  void overlapDepthCountsTheFilesHoldingOneRow() {
    // a..c, d..f, g..i side by side; then b..h over all three.
    byte[][] first = {r("a"), r("d"), r("g"), r("b")};
    byte[][] last = {r("c"), r("f"), r("i"), r("h")};
    assertEquals(1, CompactionPicker.overlapDepth(java.util.Arrays.copyOf(first, 3), java.util.Arrays.copyOf(last,
        3)));
    assertEquals(2, CompactionPicker.overlapDepth(first, last));
    // Ranges that only touch at a row both hold it.
    assertEquals(2, CompactionPicker.overlapDepth(new byte[][] {r("a"), r("c")}, new byte[][] {r("c"), r("e")}));
  }

  @Test
  void sideBySideFilesWaitUntilTooMany() {
    int n = 12; // over the bound of 8, under four times it
    long[] sizes = sizes(n, 16 * MB);
    byte[][] first = new byte[n][];
    byte[][] last = new byte[n][];
    for (int i = 0; i < n; i++) {
      first[i] = r(String.format("row%02d0", n - i)); // newest first: the load went up in key order
      last[i] = r(String.format("row%02d9", n - i));
    }
    assertNull(CompactionPicker.pick(sizes, first, last, 8));
    // The same files all holding every row are merged.
    byte[][] all = new byte[n][];
    java.util.Arrays.fill(all, r("row000"));
    byte[][] allLast = new byte[n][];
    java.util.Arrays.fill(allLast, r("row999"));
    assertEquals(new CompactionPicker.Run(0, n), CompactionPicker.pick(sizes, all, allLast, 8));
    // And side-by-side files past four times the bound are merged too.
    int many = 4 * 8 + 1;
    byte[][] f = new byte[many][];
    byte[][] l = new byte[many][];
    for (int i = 0; i < many; i++) {
      f[i] = r(String.format("row%03d0", many - i));
      l[i] = r(String.format("row%03d9", many - i));
    }
    assertTrue(CompactionPicker.pick(sizes(many, 16 * MB), f, l, 8) != null);
  }

  @Test
  void equalFlushesAreMergedTogether() {
    assertEquals(new CompactionPicker.Run(0, 9), CompactionPicker.pick(sizes(9, 16 * MB), 8));
  }

  @Test
  void aLargeOldFileWaitsUntilAsMuchLiesBesideIt() {
    long[] s = new long[9];
    for (int i = 0; i < 8; i++) {
      s[i] = 16 * MB;
    }
    s[8] = 144 * MB;
    // Taking the 144 MB file too would write 272 MB to remove 8 files, 34 MB a file; the
    // eight flushes alone cost 128 MB for 7, 18 MB a file.
    assertEquals(new CompactionPicker.Run(0, 8), CompactionPicker.pick(s, 8));
  }

  @Test
  void unlikeSizesFallBackToTheNewestFiles() {
    long[] s = new long[9];
    for (int i = 0; i < 9; i++) {
      s[i] = MB << (2 * i);
    }
    assertEquals(new CompactionPicker.Run(0, 5), CompactionPicker.pick(s, 8));
  }

  @Test
  void aRunInTheMiddleIsTaken() {
    long[] s = {MB, 2048 * MB, 64 * MB, 64 * MB, 64 * MB, 4096 * MB};
    assertEquals(new CompactionPicker.Run(2, 5), CompactionPicker.pick(s, 5));
  }

  /**
   * A steady stream of equal flushes into one group: every byte is rewritten a few times,
   * not once per merge. (Merging the newest half every time rewrote the growing merged file
   * at each merge: about 24 rewrites per byte over this stream.)
   */
  @Test
  void writeAmplificationStaysLogarithmic() {
    List<Long> files = new ArrayList<>();
    long flushed = 0;
    long merged = 0;
    for (int i = 0; i < 200; i++) {
      files.add(0, 16 * MB);
      flushed += 16 * MB;
      CompactionPicker.Run r;
      while ((r = CompactionPicker.pick(files.stream().mapToLong(Long::longValue).toArray(), 8)) != null) {
        long sum = 0;
        for (int k = r.from(); k < r.to(); k++) {
          sum += files.get(r.from());
          files.remove(r.from());
        }
        files.add(r.from(), sum);
        merged += sum;
      }
      assertTrue(files.size() <= 8);
    }
    double rewrites = (double) merged / flushed;
    assertTrue(rewrites < 4, "each byte was rewritten " + rewrites + " times");
  }

  private static long[] sizes(int n, long each) {
    long[] s = new long[n];
    java.util.Arrays.fill(s, each);
    return s;
  }
}
