package io.tabula.persistence.read;

import io.tabula.persistence.iterator.CellIterator;
import io.tabula.persistence.model.Cell;
import io.tabula.persistence.model.CellKey;
import io.tabula.persistence.model.CellKind;
import io.tabula.persistence.model.Row;
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
 * timestamp counts, the family's GC policy drops collectable versions, and the {@link
 * ReadFilter} keeps what was asked for.
 *
 * <p>Lazy: it holds one row at a time. Owns the iterator it reads. Not thread-safe.
 */
public final class RowReader implements Closeable {
  private final CellIterator in;
  private final long snapshot;
  private final Function<String, GcPolicy> gcPolicies;
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
    this.in = in;
    this.snapshot = snapshot;
    this.gcPolicies = gcPolicies;
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
    boolean wanted = true;
    for (; in.valid() && Arrays.equals(in.key().row(), row); in.next()) {
      CellKey k = in.key();
      if (k.sequence() > snapshot) {
        continue;
      }
      tombstones.accept(k, in.value());
      if (k.kind() != CellKind.PUT) {
        continue;
      }
      ColumnVersions.Step step = versions.step(k);
      if (step == ColumnVersions.Step.SHADOWED) {
        continue;
      }
      if (step == ColumnVersions.Step.NEW_COLUMN) {
        kept = 0;
        String family = familyName(k.family());
        gc = gcPolicies.apply(family);
        wanted = gc != null && filter.wantsFamily(family)
            && (filter.column() == null || filter.column().test(family, k.qualifier()));
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
    }
    return cells.isEmpty() ? null : new Row(row, cells);
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
