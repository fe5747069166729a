package io.tabula.client;

import java.util.List;

/**
 * A locality group of a table (paper §6): the families stored together in SSTables of their
 * own, whether the group is held in the serving node's memory, and how its blocks are
 * compressed. Immutable.
 *
 * @param families the group's families, in name order
 */
public record LocalityGroupDescription(String name, boolean inMemory, Compression compression,
    List<String> families) {
  /** How a group's SSTable blocks are compressed. */
  public enum Compression { NONE, LZ4, ZSTD }

  /** The group every family is in unless it was created in another. */
  public static final String DEFAULT = "default";

  public LocalityGroupDescription {
    families = List.copyOf(families);
  }
}
