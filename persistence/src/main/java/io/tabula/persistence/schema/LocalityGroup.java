package io.tabula.persistence.schema;

import io.tabula.persistence.sstable.Compression;
import io.tabula.persistence.sstable.SSTableOptions;

/**
 * A locality group (paper §6): families stored together, one SSTable set per group per
 * tablet, with the group's own block size, compression, bloom filter and in-memory setting.
 *
 * @param bloomBitsPerKey bits per key of the bloom filter over rows and columns; 0 for none
 * @param inMemory load each SSTable of the group whole into memory when it is opened
 */
public record LocalityGroup(String name, int blockSize, Compression compression, int bloomBitsPerKey,
    boolean inMemory) {
  /** The group of every family that names no other. */
  public static final String DEFAULT_NAME = "default";

  public LocalityGroup {
    if (name == null || name.isEmpty()) {
      throw new IllegalArgumentException("locality group name must not be empty");
    }
    if (compression == null) {
      throw new IllegalArgumentException("locality group " + name + ": compression must be set");
    }
    // Block size and bloom bits are checked by SSTableOptions.
    new SSTableOptions(blockSize, compression, bloomBitsPerKey, SSTableOptions.defaults().restartInterval());
  }

  /** The default group: 16 KiB blocks, no compression, 10-bit bloom, on disk. */
  public static LocalityGroup defaults(String name) {
    SSTableOptions d = SSTableOptions.defaults();
    return new LocalityGroup(name, d.blockSize(), d.compression(), d.bloomBitsPerKey(), false);
  }

  public SSTableOptions sstableOptions() {
    return new SSTableOptions(blockSize, compression, bloomBitsPerKey, SSTableOptions.defaults().restartInterval());
  }
}
