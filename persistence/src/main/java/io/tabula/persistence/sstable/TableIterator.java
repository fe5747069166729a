package io.tabula.persistence.sstable;

import io.tabula.persistence.iterator.CellIterator;
import io.tabula.persistence.model.CellKey;
import java.io.IOException;

/**
 * The two-level cursor of an {@link SSTableReader}: a binary search over the index picks
 * the data block, a search over the block's restart points the entry. Holds one data block
 * at a time. Not thread-safe.
 */
final class TableIterator implements CellIterator {
  private final SSTableReader table;
  private int block = -1;
  private Block.Cursor cursor;

  TableIterator(SSTableReader table) {
    this.table = table;
  }

  @Override
  public void seek(CellKey target) throws IOException {
    int i = table.findBlock(target);
    if (i >= table.dataBlockCount()) {
      invalidate();
      return;
    }
    load(i);
    cursor.seek(target);
    skipExhaustedBlocks();
  }

  @Override
  public void seekToFirst() throws IOException {
    if (table.dataBlockCount() == 0) {
      invalidate();
      return;
    }
    load(0);
    cursor.seekToFirst();
    skipExhaustedBlocks();
  }

  @Override
  public boolean valid() {
    return cursor != null && cursor.valid();
  }

  @Override
  public void next() throws IOException {
    requireValid();
    cursor.advance();
    skipExhaustedBlocks();
  }

  @Override
  public CellKey key() {
    requireValid();
    return cursor.key();
  }

  @Override
  public byte[] value() {
    requireValid();
    return cursor.value();
  }

  private void requireValid() {
    if (!valid()) {
      throw new IllegalStateException("iterator over " + table.path() + " is not on an entry");
    }
  }

  private void load(int i) throws IOException {
    cursor = null;
    block = i;
    cursor = table.dataBlock(i).cursor();
  }

  private void skipExhaustedBlocks() throws IOException {
    while (cursor != null && !cursor.valid()) {
      if (block + 1 >= table.dataBlockCount()) {
        invalidate();
        return;
      }
      load(block + 1);
      cursor.seekToFirst();
    }
  }

  private void invalidate() {
    cursor = null;
    block = -1;
  }
}
