package io.tabula.persistence.read;

import io.tabula.persistence.iterator.CellIterator;
import io.tabula.persistence.model.Cell;
import io.tabula.persistence.model.CellKey;
import io.tabula.persistence.model.CellKind;
import io.tabula.persistence.model.Row;
import io.tabula.persistence.schema.Aggregator;
import io.tabula.persistence.schema.GcPolicy;
import java.io.Closeable;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.Function;

/**
 * Turns a merged stream of entries into the rows a reader sees (paper §5.3): entries newer
 * than the snapshot are ignored, tombstones hide older writes, only the latest write of a
 * timestamp counts (in an aggregate family, the fold of the operands no delete hides), the family's GC policy drops collectable versions, and the {@link
 * ReadFilter} keeps what was asked for.
 *
 * <p>Lazy: it holds one row at a time. Owns the iterator it reads. Not thread-safe.
 */
public final class RowReader implements Closeable {
  private final CellIterator in;
  private final long snapshot;
  private final Function<String, GcPolicy> gcPolicies;
  private final Function<String, Aggregator> aggregators;
  private final long nowMicros;
  private final ReadFilter filter;
  private final Tombstones tombstones = new Tombstones();
  private final ColumnVersions versions = new ColumnVersions();

  private byte[] familyBytes;
  private String familyName;

  /**
   * @param in positioned on the first entry to read (after a seek)
   * @param snapshot highest sequence number visible
   * @param gcPolicies a family's GC policy by name; null for a family not in the schema, whose
   *     cells are never returned
   */
  public RowReader(CellIterator in, long snapshot, Function<String, GcPolicy> gcPolicies, long nowMicros,
      ReadFilter filter) {
    this(in, snapshot, gcPolicies, f -> null, nowMicros, filter);
  }

  /**
   * @param aggregators a family's {@link Aggregator}, null for a family of raw values: the
   *     operands of one cell of an aggregate family are read as their fold
   */
  public RowReader(CellIterator in, long snapshot, Function<String, GcPolicy> gcPolicies,
      Function<String, Aggregator> aggregators, long nowMicros, ReadFilter filter) {
    this.in = in;
    this.snapshot = snapshot;
    this.gcPolicies = gcPolicies;
    this.aggregators = aggregators;
    this.nowMicros = nowMicros;
    this.filter = filter;
  }

  /** The next row with at least one cell left after filtering, or null at the end. */
  public Row next() throws IOException {
    while (in.valid()) {
      Row r = readRow();
      if (r != null) {
        return r;
      }
    }
    return null;
  }

  private Row readRow() throws IOException {
    byte[] row = in.key().row();
    tombstones.startRow();
    List<Cell> cells = new ArrayList<>();
    versions.startRow();
    int kept = 0;
    GcPolicy gc = GcPolicy.KEEP_ALL;
    Aggregator aggregator = null;
    boolean wanted = true;
    // The fold of the last cell added when it is an aggregate cell: its older operands (the
    // entries of its timestamp that follow) go into it, and it replaces the cell's value once
    // the timestamp's entries end.
    Aggregator.Folder folder = null;
    for (; in.valid() && Arrays.equals(in.key().row(), row); in.next()) {
      CellKey k = in.key();
      if (k.sequence() > snapshot) {
        continue;
      }
      tombstones.accept(k, in.value());
      if (!k.kind().isCell()) {
        continue;
      }
      ColumnVersions.Step step = versions.step(k);
      if (step == ColumnVersions.Step.SHADOWED) {
        if (folder != null && k.kind() == CellKind.MERGE && !tombstones.hides(k)) {
          folder.add(in.value());
        }
        continue;
      }
      finishFold(cells, folder);
      folder = null;
      if (step == ColumnVersions.Step.NEW_COLUMN) {
        kept = 0;
        String family = familyName(k.family());
        gc = gcPolicies.apply(family);
        aggregator = aggregators.apply(family);
        wanted = gc != null && filter.wantsFamily(family)
            && (filter.column() == null || filter.column().test(family, k.qualifier()));
      }
      if ((k.kind() == CellKind.MERGE) != (aggregator != null)) {
        // an operand under a family of raw values, or a raw value under an aggregate family: left
        // from a family dropped and made again as the other kind, never read
        continue;
      }
      if (tombstones.hides(k)) {
        continue;
      }
      int rank = versions.nextRank();
      if (!wanted || gc.collect(rank, k.timestamp(), nowMicros)) {
        continue;
      }
      if (k.timestamp() < filter.startTimestamp() || k.timestamp() >= filter.endTimestamp()) {
        continue;
      }
      if (filter.maxVersions() > 0 && kept >= filter.maxVersions()) {
        continue;
      }
      kept++;
      cells.add(new Cell(familyName, k.qualifier(), k.timestamp(), in.value()));
      folder = aggregator != null ? aggregator.folder(in.value()) : null;
    }
    finishFold(cells, folder);
    return cells.isEmpty() ? null : new Row(row, cells);
  }

  /** The last of {@code cells} with the value {@code folder} folded, if there is a fold. */
  private static void finishFold(List<Cell> cells, Aggregator.Folder folder) {
    if (folder != null) {
      Cell last = cells.get(cells.size() - 1);
      cells.set(cells.size() - 1, new Cell(last.family(), last.qualifier(), last.timestamp(), folder.result()));
    }
  }

  private String familyName(byte[] f) {
    if (familyBytes == null || !Arrays.equals(familyBytes, f)) {
      familyBytes = f;
      familyName = new String(f, StandardCharsets.UTF_8);
    }
    return familyName;
  }

  @Override
  public void close() throws IOException {
    in.close();
  }
}
