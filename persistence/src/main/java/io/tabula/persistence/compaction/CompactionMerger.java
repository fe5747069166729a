package io.tabula.persistence.compaction;

import io.tabula.persistence.iterator.CellIterator;
import io.tabula.persistence.model.CellKey;
import io.tabula.persistence.model.CellKind;
import io.tabula.persistence.read.ColumnVersions;
import io.tabula.persistence.read.Tombstones;
import io.tabula.persistence.schema.GcPolicy;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.function.Function;

/**
 * The rule of what a compaction (paper §5.4) keeps when it rewrites entries:
 *
 * <ul>
 *   <li>a PUT of a family no longer in the schema is dropped;
 *   <li>a PUT hidden by a tombstone, shadowed by a later write of the same timestamp, or
 *       collectable under its family's GC policy is dropped;
 *   <li>a minor or merging compaction keeps tombstones (older SSTables outside the merge
 *       may hold data they hide), except one made redundant by a wider or later tombstone;
 *   <li>a major compaction, whose input is every SSTable of the locality group, drops
 *       every tombstone: what they hid is gone with them.
 * </ul>
 *
 * Correct only when the input holds the newest entries of the group (the memtable, or the
 * newest SSTables): an entry's rank among the input's visible versions is then at most its
 * rank overall, so a version the input ranks past a MaxVersions limit is collectable.
 */
public final class CompactionMerger {
  private CompactionMerger() {}

  /** Receives the entries a compaction keeps, in order. */
  @FunctionalInterface
  public interface Sink {
    void add(CellKey key, byte[] value) throws IOException;
  }

  /** Statistics of one run. */
  public record Result(long read, long written, long dropped) {}

  /**
   * Copies what survives from {@code in} (positioned on its first entry) to {@code out}.
   */
  public static Result merge(CellIterator in, Sink out, Function<String, GcPolicy> gcPolicies, long nowMicros,
      boolean major) throws IOException {
    Tombstones tombstones = new Tombstones();
    ColumnVersions versions = new ColumnVersions();
    long read = 0;
    long written = 0;
    byte[] row = null;
    GcPolicy gc = GcPolicy.KEEP_ALL;
    for (; in.valid(); in.next()) {
      CellKey k = in.key();
      byte[] v = in.value();
      read++;
      if (row == null || !Arrays.equals(row, k.row())) {
        row = k.row();
        tombstones.startRow();
        versions.startRow();
      }
      if (k.kind() != CellKind.PUT) {
        boolean redundant = tombstones.redundant(k);
        tombstones.accept(k, v);
        if (!major && !redundant) {
          out.add(k, v);
          written++;
        }
        continue;
      }
      tombstones.accept(k, v);
      ColumnVersions.Step step = versions.step(k);
      if (step == ColumnVersions.Step.SHADOWED) {
        continue;
      }
      if (step == ColumnVersions.Step.NEW_COLUMN) {
        gc = gcPolicies.apply(new String(k.family(), StandardCharsets.UTF_8));
      }
      if (tombstones.hides(k)) {
        continue;
      }
      if (gc == null || gc.collect(versions.nextRank(), k.timestamp(), nowMicros)) {
        continue;
      }
      out.add(k, v);
      written++;
    }
    return new Result(read, written, read - written);
  }
}
