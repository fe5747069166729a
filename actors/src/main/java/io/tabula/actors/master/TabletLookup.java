package io.tabula.actors.master;

import io.tabula.protocol.kryo.KryoSerializable;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;

/**
 * The master's answer to a node looking up which tablets hold a table's rows (paper §5.1: a
 * read of the METADATA table), from its own directory: the tablet at a position and its
 * neighbours, each as its table, id and row range (not its files: routing needs none). A node
 * caches the answer ({@code TabletLocations}) and asks again only when a tablet it names answers
 * that the row moved. Stateless; the directory read is immutable.
 */
public final class TabletLookup {
  /** The most tablets one answer names. */
  public static final int MOST_TABLETS = 1_000;
  /**
   * About the most bytes of row keys and ids one answer carries: it must fit the cluster
   * transport's 1 MiB frame whatever the keys' length (a row key may be 4 KiB and more).
   */
  static final long MOST_BYTES = 256 * 1024;

  private TabletLookup() {}

  /**
   * The answer to {@link Master.Locate}: the directory's version, whether the table exists and
   * when it was made ({@link TableInfo#createdMicros}: a table deleted and made again under its
   * name is another table), the tablets found, in row order (empty for an unknown table), and
   * each one's owner at that version ({@code owners}, by position; "" for one not placed).
   */
  public record Located(long version, boolean tableKnown, long tableCreated, List<TabletInfo> tablets,
      List<String> owners) implements KryoSerializable {
    public Located {
      if (owners.size() != tablets.size()) {
        throw new IllegalArgumentException(tablets.size() + " tablets, " + owners.size() + " owners");
      }
    }

    /** An answer without tablets. */
    static Located none(long version, boolean tableKnown, long tableCreated) {
      return new Located(version, tableKnown, tableCreated, List.of(), List.of());
    }
  }

  /**
   * In {@code d}: forwards, the tablet of {@code table} holding {@code row} and those after it;
   * {@code before}, the one holding the greatest rows below {@code row} (an empty row: the last
   * tablet) and those before it. At most {@code count} tablets (at least 1, at most
   * {@link #MOST_TABLETS}) and about {@link #MOST_BYTES}, always the one at the position.
   */
  public static Located answer(Directory d, String table, byte[] row, boolean before, int count) {
    TableInfo info = d.table(table);
    if (info == null) {
      return Located.none(d.version(), false, 0);
    }
    List<TabletInfo> all = d.tabletsOf(table);
    int at = before ? indexBefore(d, table, row) : d.indexOf(table, row);
    if (at < 0) {
      return Located.none(d.version(), true, info.createdMicros());
    }
    int most = Math.max(1, Math.min(MOST_TABLETS, count));
    ArrayDeque<TabletInfo> found = new ArrayDeque<>();
    ArrayDeque<String> owners = new ArrayDeque<>();
    long bytes = 0;
    int step = before ? -1 : 1;
    for (int i = at; i >= 0 && i < all.size() && found.size() < most; i += step) {
      TabletInfo t = all.get(i);
      String owner = d.ownerOf(t.id());
      bytes += t.id().length() + t.startRow().length + t.endRow().length + owner.length() + 32L;
      if (!found.isEmpty() && bytes > MOST_BYTES) {
        break;
      }
      TabletInfo slim = TabletInfo.empty(t.table(), t.id(), t.startRow(), t.endRow());
      if (before) {
        found.addFirst(slim);
        owners.addFirst(owner);
      } else {
        found.addLast(slim);
        owners.addLast(owner);
      }
    }
    return new Located(d.version(), true, info.createdMicros(), new ArrayList<>(found), new ArrayList<>(owners));
  }

  /** The answer to {@code c}. */
  static Located answer(Directory d, Master.Locate c) {
    return answer(d, c.table(), c.row(), c.before(), c.count());
  }

  /** The position in the table's tablets of {@link Directory#locateBefore}'s tablet, or -1. */
  private static int indexBefore(Directory d, String table, byte[] end) {
    TabletInfo t = d.locateBefore(table, end);
    return t == null ? -1 : d.indexOf(table, t.startRow());
  }

  /** Those of tablets {@code ids} that {@code d} has with no file and no log named ({@link Master.NeverWritten}). */
  public static Master.Names neverWritten(Directory d, List<String> ids) {
    List<String> out = new ArrayList<>();
    for (String id : ids.subList(0, Math.min(ids.size(), MOST_TABLETS))) {
      TabletInfo t = d.tablet(id);
      TabletPlacement p = t == null ? null : d.placementOf(id);
      if (t != null && t.files().isEmpty() && (p == null || p.logs().isEmpty())) {
        out.add(id);
      }
    }
    return new Master.Names(out);
  }

  /** Those of commit-log folders {@code folders} a placement of {@code d} names ({@link Master.NamedLogs}). */
  static Master.Names namedLogs(Directory d, List<String> folders) {
    return new Master.Names(folders.stream().filter(d::namesLog).toList());
  }
}
