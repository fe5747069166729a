package io.tabula.bench;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.AppenderBase;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.LoggerFactory;

/**
 * Counts the warnings and errors logged in this JVM (an in-process node's among them) while it
 * is attached, and keeps the first few, so a benchmark's report can say what the node
 * complained of. The lines still go to the usual appenders. Thread-safe.
 */
final class LogTally extends AppenderBase<ILoggingEvent> implements AutoCloseable {
  private static final int KEPT = 5;

  private final Logger root;
  private int warnings;
  private int errors;
  private final List<String> first = new ArrayList<>();

  private LogTally(Logger root) {
    this.root = root;
  }

  /** Attaches a tally to the root logger. */
  static LogTally attach() {
    Logger root = (Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
    LogTally tally = new LogTally(root);
    tally.setContext((LoggerContext) LoggerFactory.getILoggerFactory());
    tally.setName("bench-tally");
    tally.start();
    root.addAppender(tally);
    return tally;
  }

  @Override
  protected synchronized void append(ILoggingEvent e) {
    if (e.getLevel().isGreaterOrEqual(Level.ERROR)) {
      errors++;
    } else if (e.getLevel().isGreaterOrEqual(Level.WARN)) {
      warnings++;
    } else {
      return;
    }
    if (first.size() < KEPT) {
      first.add(e.getLevel() + " " + e.getLoggerName() + ": " + e.getFormattedMessage());
    }
  }

  synchronized int warnings() {
    return warnings;
  }

  synchronized int errors() {
    return errors;
  }

  /** The first warnings and errors, level, logger and message each. */
  synchronized List<String> first() {
    return List.copyOf(first);
  }

  @Override
  public void close() {
    root.detachAppender(this);
    stop();
  }
}
