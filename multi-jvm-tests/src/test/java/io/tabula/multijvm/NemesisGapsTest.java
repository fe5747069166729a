package io.tabula.multijvm;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import org.junit.jupiter.api.Test;

/** The nemesis scenario's reading of gaps between successful reads, and of tablet bounds as the nodes show them. */
class NemesisGapsTest {
  @Test
  void theLongestGapOverlappingAWindowCountsTheOnesAcrossItsEnds() {
    long[] reads = {10, 20, 50, 55};
    assertArrayEquals(new long[] {20, 50}, NemesisGaps.longestGap(reads, 25, 52));
    assertArrayEquals(new long[] {20, 50}, NemesisGaps.longestGap(reads, 0, 21));
    assertArrayEquals(new long[] {10, 20}, NemesisGaps.longestGap(reads, 0, 12));
  }

  @Test
  void aGapStillOpenAtTheWindowsEndCountsUpToIt() {
    assertArrayEquals(new long[] {55, 70}, NemesisGaps.longestGap(new long[] {10, 20, 50, 55}, 60, 70));
    assertNull(NemesisGaps.longestGap(new long[0], 60, 70));
  }

  @Test
  void boundsReadAsRows() {
    assertEquals("k3", NemesisGaps.row("\\\"k3\\\""));
    assertNull(NemesisGaps.row("\\\"\\\""));
    assertNull(NemesisGaps.row("null"));
    assertEquals("k3", NemesisGaps.row("0x6b33"));
    String[] tablet = {"t-4", "k3", "k4", "n2"};
    assertEquals(true, NemesisGaps.holds(tablet, "k3-reg"));
    assertEquals(false, NemesisGaps.holds(tablet, "k4-reg"));
    assertEquals(true, NemesisGaps.holds(new String[] {"t-1", null, "k1", "n1"}, "k0-reg"));
  }
}
