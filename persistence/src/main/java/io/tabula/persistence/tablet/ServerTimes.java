package io.tabula.persistence.tablet;

import io.tabula.persistence.model.Mutation;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A tablet's server-assigned timestamps (the time a cell sent with {@link Mutation#SERVER_TIME}
 * takes): the clock in whole milliseconds, as Cloud Bigtable's, but never below the highest the
 * tablet ever handed out. A tablet moved to a node whose clock is behind, or a clock stepped
 * back, must not give a later write an older timestamp than an earlier write of the same
 * cell: reads of the latest version, and a GC keeping the newest versions, would take the
 * later write for the older one (docs/formats/manifest.md, "Server times").
 *
 * <p>The floor {@code F} is the highest server time the tablet handed out that it knows of:
 * when it opens, the manifest's {@link TabletManifest#maxServerTime}, raised by the server
 * time of every commit-log record it replays ({@link #raise}); then each time it hands out. A
 * write gets {@code max(floor(clock / 1000) * 1000, F)}, which becomes {@code F}. So:
 *
 * <ol>
 *   <li>No server time is below one handed out before it in this life, nor below that of a
 *       write acknowledged before it was asked for in an earlier life of the tablet (a manifest
 *       or a replayed record carries it) or of its parents (a split's children inherit the
 *       parent's {@code F}, a merge's child the higher of its parents'). Two may be equal: one
 *       cell's versions at one timestamp are one version, and the write with the higher
 *       sequence number, the later, is the one read.
 *   <li>{@code F} moves with the clock: server times are the clock's whenever the clock is at
 *       or past {@code F}, and stay at {@code F} while it is behind. They never run ahead of
 *       the highest clock reading that gave one.
 *   <li>Server times are whole milliseconds: the clock is rounded down, and {@code F} only ever
 *       holds a server time (or 0).
 *   <li>Only server times raise {@code F}: a client's timestamp, however far ahead, does not.
 * </ol>
 *
 * Thread-safe: one atomic maximum.
 */
final class ServerTimes {
  private final MicrosClock clock;
  private final AtomicLong floor;

  ServerTimes(MicrosClock clock, long floor) {
    this.clock = clock;
    this.floor = new AtomicLong(floor);
  }

  /** The server time for a write now, which becomes the floor. */
  long next() {
    return floor.accumulateAndGet(clock.nowMicros() / 1000 * 1000, Math::max);
  }

  /** Raises the floor to {@code serverTime}, one handed out before (a replayed record's); a lower one changes nothing. */
  void raise(long serverTime) {
    floor.accumulateAndGet(serverTime, Math::max);
  }

  /**
   * The highest server time handed out that this knows of, which a manifest records: any
   * write that took its server time before this call took one at or below it.
   */
  long max() {
    return floor.get();
  }
}
