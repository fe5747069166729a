package io.tabula.actors.master;

import io.tabula.protocol.errors.ErrorCode;
import io.tabula.protocol.errors.Refusal;
import java.util.HexFormat;
import java.util.UUID;

/**
 * Ids of tablets made by a split or a merge. A tablet id is never used for two tablets: a
 * tablet's folder, its sharded entity and every cached location (nodes' and clients') go by it,
 * and a stale location is safe only because a tablet's row range never changes under its id
 * (docs/fencing.md, the assumptions). The tablets of a new table take the directory's journaled
 * counter; a split's and a merge's children are made away from the master (by the splitting
 * tablet, or before the merge is recorded), so they take the 122 random bits of a UUID: at a
 * million tablets made a day for a century, the chance that any two ever meet is about 10^-16
 * (48 bits, as before, gave a child about a 7% chance of meeting a live tablet's id over ten
 * million splits of a table of a million tablets). Stateless.
 */
public final class TabletIds {
  private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(TabletIds.class);

  private TabletIds() {}

  /**
   * A run-time check of that promise, before a split is recorded: null if no tablet of {@code d}
   * has any of the {@code children}'s ids; else the refusal, logged as an error (a bug, or ids
   * that met).
   */
  static Refusal taken(Directory d, String parent, String... children) {
    for (String id : children) {
      if (d.tablet(id) != null) {
        LOG.error("tablet {} split into {}, but the directory has a tablet {}: the split is not recorded", parent,
            String.join(" and ", children), id);
        return Refusal.of(ErrorCode.INTERNAL, "a child of the split of tablet " + parent + " has the id of another"
            + " tablet, " + id);
      }
    }
    return null;
  }

  /** The id of a new table's tablet number {@code n} (the directory's counter). */
  static String numbered(String table, long n) {
    return table + "-" + n;
  }

  /** A fresh id for a child tablet of {@code table}: the table's name and 32 hex digits. */
  public static String fresh(String table) {
    UUID u = UUID.randomUUID();
    HexFormat hex = HexFormat.of();
    return table + "-" + hex.toHexDigits(u.getMostSignificantBits()) + hex.toHexDigits(u.getLeastSignificantBits());
  }
}
