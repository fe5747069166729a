package io.tabula.cluster.security;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** New tokens' signature checks: a second's worth at once, then no more until time passes. */
class RateBudgetTest {
  @Test
  void aBurstThenOneAtATime() throws InterruptedException {
    RateBudget b = new RateBudget(100);
    int taken = 0;
    while (b.take()) {
      taken++;
      assertTrue(taken <= 101, "no more than a second's worth at once");
    }
    assertTrue(taken >= 100, "a second's worth at once: " + taken);
    assertFalse(b.take());
    Thread.sleep(50);
    assertTrue(b.take(), "time gives more");
  }
}
