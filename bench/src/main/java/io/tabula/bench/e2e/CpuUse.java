package io.tabula.bench.e2e;

import java.lang.management.ManagementFactory;
import java.time.Duration;

/**
 * CPU time the node process and this (client) process used over a window. On a shared
 * machine the wall-clock rate moves with other load; CPU per value moves much less, so the
 * report gives both.
 *
 * @param nodeNanos CPU time of the node process in the window
 * @param clientNanos CPU time of this process in the window
 */
record CpuUse(long nodeNanos, long clientNanos) {
  static final CpuUse NONE = new CpuUse(0, 0);

  /** A reading now, to subtract from a later one. */
  static CpuUse now(long nodePid) {
    long node = ProcessHandle.of(nodePid).flatMap(h -> h.info().totalCpuDuration()).map(Duration::toNanos)
        .orElse(0L);
    long client = ManagementFactory.getPlatformMXBean(com.sun.management.OperatingSystemMXBean.class)
        .getProcessCpuTime();
    return new CpuUse(node, Math.max(0, client));
  }

  /**
   * Waits until process {@code pid} has used under {@code share} of a core for two seconds
   * running, for at most {@code atMost} after {@code startNanos}; returns the seconds since
   * {@code startNanos}.
   */
  static double awaitIdle(long pid, long startNanos, double share, Duration atMost) throws InterruptedException {
    return awaitIdle(pid, startNanos, share, 2, atMost);
  }

  /** Like {@link #awaitIdle(long, long, double, Duration)}, idle for {@code seconds} running. */
  static double awaitIdle(long pid, long startNanos, double share, int seconds, Duration atMost)
      throws InterruptedException {
    long deadline = startNanos + atMost.toNanos();
    CpuUse last = now(pid);
    int idleSeconds = 0;
    while (idleSeconds < seconds && System.nanoTime() < deadline) {
      Thread.sleep(1000);
      CpuUse now = now(pid);
      idleSeconds = now.minus(last).nodeNanos() < share * 1e9 ? idleSeconds + 1 : 0;
      last = now;
    }
    return (System.nanoTime() - startNanos) / 1e9;
  }

  CpuUse minus(CpuUse earlier) {
    return new CpuUse(nodeNanos - earlier.nodeNanos, clientNanos - earlier.clientNanos);
  }

  CpuUse plus(CpuUse other) {
    return new CpuUse(nodeNanos + other.nodeNanos, clientNanos + other.clientNanos);
  }
}
