package io.tabula.persistence.wal;

import java.io.IOException;

/** Receives the records of a replay, in log order. */
@FunctionalInterface
public interface RecordVisitor {
  void record(String tabletId, long sequence, byte[] payload) throws IOException;
}
