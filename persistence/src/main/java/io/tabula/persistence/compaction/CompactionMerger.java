package io.tabula.persistence.compaction;

import io.tabula.persistence.iterator.CellIterator;
import io.tabula.persistence.model.CellKey;
import io.tabula.persistence.model.CellKind;
import io.tabula.persistence.read.ColumnVersions;
import io.tabula.persistence.read.Tombstones;
import io.tabula.persistence.schema.Aggregator;
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
 *       every tombstone: what they hid is gone with them;
 *   <li>an idempotency token is kept for {@link TabletTokensWindow#MICROS} after it was written;
 *   <li>the operands of one cell of an aggregate family are written as their fold (an operand
 *       under a family of raw values, left from a family dropped and made again, is dropped).
 *       Sound because the input's sequences are contiguous (no entry outside it has a sequence
 *       between two of its own: a memtable holds a contiguous range, see {@link
 *       io.tabula.persistence.tablet.Tablet}, and a compaction takes a run of files adjacent
 *       in age): a tombstone outside the input is older or newer
 *       than every operand folded, so it hides all of them or none, as it does their fold.
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

  /** {@link #merge(CellIterator, Sink, Function, Function, long, boolean)} of a schema without aggregate families. */
  public static Result merge(CellIterator in, Sink out, Function<String, GcPolicy> gcPolicies, long nowMicros,
      boolean major) throws IOException {
    return merge(in, out, gcPolicies, f -> null, nowMicros, major);
  }

  /**
   * Copies what survives from {@code in} (positioned on its first entry) to {@code out}; the
   * operands of a cell of an aggregate family ({@code aggregators} gives a family's, null for
   * a family of raw values) that no delete hides are written as one, their fold, under the
   * newest operand's key.
   */
  public static Result merge(CellIterator in, Sink out, Function<String, GcPolicy> gcPolicies,
      Function<String, Aggregator> aggregators, long nowMicros, boolean major) throws IOException {
    Tombstones tombstones = new Tombstones();
    ColumnVersions versions = new ColumnVersions();
    Pending pending = new Pending(out);
    long read = 0;
    byte[] row = null;
    GcPolicy gc = GcPolicy.KEEP_ALL;
    Aggregator aggregator = null;
    for (; in.valid(); in.next()) {
      CellKey k = in.key();
      byte[] v = in.value();
      read++;
      if (row == null || !Arrays.equals(row, k.row())) {
        pending.flush();
        row = k.row();
        tombstones.startRow();
        versions.startRow();
      }
      if (k.kind() == CellKind.TOKEN) {
        // an idempotency token: kept while a retry may still come
        pending.flush();
        if (nowMicros - k.timestamp() < TabletTokensWindow.MICROS) {
          pending.write(k, v);
        }
        continue;
      }
      if (k.kind().isTombstone()) {
        pending.flush();
        boolean redundant = tombstones.redundant(k);
        tombstones.accept(k, v);
        if (!major && !redundant) {
          pending.write(k, v);
        }
        continue;
      }
      tombstones.accept(k, v);
      ColumnVersions.Step step = versions.step(k);
      if (step == ColumnVersions.Step.SHADOWED) {
        if (pending.folding() && k.kind() == CellKind.MERGE && !tombstones.hides(k)) {
          pending.fold(v);
        }
        continue;
      }
      pending.flush();
      if (step == ColumnVersions.Step.NEW_COLUMN) {
        String family = new String(k.family(), StandardCharsets.UTF_8);
        gc = gcPolicies.apply(family);
        aggregator = aggregators.apply(family);
      }
      if (tombstones.hides(k) || (k.kind() == CellKind.MERGE) != (aggregator != null)) {
        // hidden, or left from a family dropped and made again as the other kind (an operand
        // under a family of raw values, a raw value under an aggregate family)
        continue;
      }
      if (gc == null || gc.collect(versions.nextRank(), k.timestamp(), nowMicros)) {
        continue;
      }
      if (aggregator != null) {
        pending.start(aggregator, k, v);
      } else {
        pending.write(k, v);
      }
    }
    pending.flush();
    return new Result(read, pending.written, read - pending.written);
  }

  /** The aggregate cell being folded, written once the entries of its timestamp end. */
  private static final class Pending {
    private final Sink out;
    private CellKey key;
    private Aggregator.Folder folder;
    long written;

    Pending(Sink out) {
      this.out = out;
    }

    boolean folding() {
      return key != null;
    }

    void start(Aggregator aggregator, CellKey k, byte[] v) {
      key = k;
      folder = aggregator.folder(v);
    }

    void fold(byte[] v) {
      folder.add(v);
    }

    void write(CellKey k, byte[] v) throws IOException {
      out.add(k, v);
      written++;
    }

    void flush() throws IOException {
      if (key != null) {
        CellKey k = key;
        key = null;
        write(k, folder.result());
        folder = null;
      }
    }
  }
}
