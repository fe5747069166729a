package io.tabula.actors;

import io.tabula.persistence.model.InvalidMutationException;
import io.tabula.persistence.storage.CorruptionException;
import io.tabula.persistence.tablet.TabletUnavailableException;
import io.tabula.persistence.wal.LogLostException;
import io.tabula.protocol.errors.ErrorCode;
import io.tabula.protocol.errors.Refusal;
import io.tabula.protocol.errors.Refused;
import io.tabula.streams.filter.FilterTooSlowException;
import io.tabula.streams.filter.InvalidFilterException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Failures of the engine, of filters and of asks as the {@link Refusal}s a caller gets: the
 * one place that decides which failures are the client's doing (answered, not logged), which
 * are the node's (logged here, where they are turned into an answer, so once) and which code
 * each gets.
 *
 * <ul>
 *   <li>a refusal stays what it is; a closed or split tablet is {@link ErrorCode#MOVED}; a bad
 *       mutation or filter is INVALID_ARGUMENT (an unknown family NOT_FOUND);
 *   <li>damaged stored data ({@link CorruptionException}) is DATA_LOSS, and the node logs the
 *       file and offset at ERROR, once per file;
 *   <li>any other storage failure is UNAVAILABLE, logged at WARN at most every few seconds;
 *   <li>an ask that timed out is UNAVAILABLE;
 *   <li>anything else is a bug: logged at ERROR with its stack, answered INTERNAL with a
 *       message that names no Java class.
 * </ul>
 *
 * <p>Thread-safe.
 */
public final class Refusals {
  private static final Logger LOG = LoggerFactory.getLogger(Refusals.class);
  private static final RateLimitedLog STORAGE = new RateLimitedLog(LOG, Duration.ofSeconds(10));
  /** Damaged files already logged (their paths, relative to the storage root): few, bounded by the node's files. */
  private static final Set<String> DAMAGED = ConcurrentHashMap.newKeySet();

  private Refusals() {}

  /** The refusal for {@code failure}, logging it when it is the node's fault (see the class header). */
  public static Refusal of(Throwable failure) {
    Throwable e = Refusal.unwrap(failure);
    if (e instanceof UncheckedIOException u && u.getCause() != null) {
      e = u.getCause();
    }
    if (e instanceof Refused r) {
      return r.refusal();
    }
    if (e instanceof TabletUnavailableException) {
      return Refusal.of(ErrorCode.MOVED, e.getMessage());
    }
    if (e instanceof InvalidMutationException m) {
      return Refusal.of(m.isUnknownFamily() ? ErrorCode.NOT_FOUND : ErrorCode.INVALID_ARGUMENT, m.getMessage());
    }
    if (e instanceof InvalidFilterException) {
      return Refusal.of(ErrorCode.INVALID_ARGUMENT, e.getMessage());
    }
    if (e instanceof FilterTooSlowException) {
      return Refusal.of(ErrorCode.RESOURCE_EXHAUSTED, e.getMessage());
    }
    CorruptionException damage = corruption(e);
    if (damage != null) {
      if (DAMAGED.add(damage.file())) {
        LOG.error("stored data is damaged: {}; reads that need it fail with DATA_LOSS (logged once for the file)",
            damage.getMessage());
      }
      return Refusal.of(ErrorCode.DATA_LOSS, "stored data is damaged: " + damage.getMessage());
    }
    if (LogLostException.in(e)) {
      // This node was taken for dead (fenced), or its log failed an fsync (the node logs that
      // once itself and stops): its tablets are served elsewhere now, or soon.
      return Refusal.of(ErrorCode.UNAVAILABLE, "this node no longer serves the tablet: " + e.getMessage());
    }
    if (e instanceof IOException) {
      STORAGE.warn("storage failed: " + e.getMessage(), e);
      return Refusal.of(ErrorCode.UNAVAILABLE, "storage failed: " + e.getMessage());
    }
    if (e instanceof TimeoutException) {
      return Refusal.of(ErrorCode.UNAVAILABLE, "no answer in time from the tablet's server; try again");
    }
    return unexpected(e);
  }

  /** A failure nobody foresaw: logged here with its stack, answered INTERNAL. */
  public static Refusal unexpected(Throwable e) {
    LOG.error("unexpected failure while serving a request", e);
    return Refusal.of(ErrorCode.INTERNAL, "internal error in the node (its log has the details)");
  }

  private static CorruptionException corruption(Throwable e) {
    for (Throwable c = e; c != null; c = c.getCause()) {
      if (c instanceof CorruptionException ce) {
        return ce;
      }
      if (c.getCause() == c) {
        return null;
      }
    }
    return null;
  }
}
