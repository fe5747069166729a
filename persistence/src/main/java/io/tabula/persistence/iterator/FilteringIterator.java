package io.tabula.persistence.iterator;

import io.tabula.persistence.model.CellKey;
import java.io.IOException;
import java.util.function.Predicate;

/** Passes only the entries whose key satisfies a predicate. Owns the wrapped iterator. */
public final class FilteringIterator implements CellIterator {
  private final CellIterator in;
  private final Predicate<CellKey> keep;

  public FilteringIterator(CellIterator in, Predicate<CellKey> keep) {
    this.in = in;
    this.keep = keep;
  }

  private void skip() throws IOException {
    while (in.valid() && !keep.test(in.key())) {
      in.next();
    }
  }

  @Override
  public void seek(CellKey target) throws IOException {
    in.seek(target);
    skip();
  }

  @Override
  public void seekToFirst() throws IOException {
    in.seekToFirst();
    skip();
  }

  @Override
  public boolean valid() {
    return in.valid();
  }

  @Override
  public void next() throws IOException {
    in.next();
    skip();
  }

  @Override
  public CellKey key() {
    return in.key();
  }

  @Override
  public byte[] value() {
    return in.value();
  }

  @Override
  public void close() throws IOException {
    in.close();
  }
}
