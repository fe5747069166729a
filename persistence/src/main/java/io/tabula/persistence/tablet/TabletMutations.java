package io.tabula.persistence.tablet;

import io.tabula.persistence.model.InvalidMutationException;
import io.tabula.persistence.model.Mutation;
import io.tabula.persistence.model.RowMutation;
import io.tabula.persistence.schema.Aggregator;
import io.tabula.persistence.schema.ColumnFamily;
import io.tabula.persistence.schema.TableSchema;
import java.util.ArrayList;
import java.util.List;

/**
 * A row mutation checked against the table's schema, as the tablet applies it: every family
 * exists, a family of raw values takes only SetCell, an aggregate family only AddToCell and
 * MergeToCell (with a state of its aggregator's form), and each AddToCell becomes the
 * MergeToCell of its operand, which is what the log and the memtable hold. Stateless.
 */
final class TabletMutations {
  private TabletMutations() {}

  /**
   * {@code rm} as the tablet applies it, or null if nothing of it has an effect (it holds only
   * MergeToCells of NULL, which Cloud Bigtable accepts and ignores).
   *
   * @throws InvalidMutationException naming the mutation's field
   */
  static RowMutation checked(TableSchema schema, RowMutation rm) {
    List<Mutation> ms = rm.mutations();
    List<Mutation> out = null;
    for (int i = 0; i < ms.size(); i++) {
      Mutation m = ms.get(i);
      String f = m.familyOrNull();
      if (f == null) { // a whole-row delete, or the row mutation's idempotency token: kept as it is
        if (out != null) {
          out.add(m);
        }
        continue;
      }
      ColumnFamily cf = schema.family(f);
      if (cf == null) {
        throw InvalidMutationException.unknownFamily("mutations[" + i + "].family_name", f);
      }
      Aggregator a = cf.aggregator();
      Mutation resolved = resolve(i, m, a);
      if (resolved != m && out == null) {
        out = new ArrayList<>(ms.subList(0, i));
      }
      if (out != null && resolved != null) {
        out.add(resolved);
      }
    }
    if (out == null) {
      return rm;
    }
    return out.isEmpty() ? null : new RowMutation(rm.row(), out);
  }

  /** {@code m} as applied to a family with aggregator {@code a} (null: raw values); null if it has no effect. */
  private static Mutation resolve(int i, Mutation m, Aggregator a) {
    String at = "mutations[" + i + "]";
    if (m instanceof Mutation.SetCell s && a != null) {
      throw new InvalidMutationException(at + ".set_cell.family_name", "names aggregate family '" + s.family()
          + "' (" + describe(a) + "), whose cells are written with AddToCell or MergeToCell");
    }
    if (m instanceof Mutation.AddToCell add) {
      if (a == null) {
        throw new InvalidMutationException(at + ".add_to_cell.family_name", notAggregate(add.family()));
      }
      return new Mutation.MergeToCell(add.family(), add.qualifier(), add.timestamp(), a.operand(add.input()));
    }
    if (m instanceof Mutation.MergeToCell merge) {
      if (a == null) {
        throw new InvalidMutationException(at + ".merge_to_cell.family_name", notAggregate(merge.family()));
      }
      if (merge.state() == null) {
        return null;
      }
      String problem = a.problem(merge.state());
      if (problem != null) {
        throw new InvalidMutationException(at + ".merge_to_cell.input", problem);
      }
    }
    return m;
  }

  private static String notAggregate(String family) {
    return "names column family '" + family + "', which is not an aggregate family";
  }

  /** How the API would name the aggregate: "Int64 sum". */
  static String describe(Aggregator a) {
    return switch (a) {
      case SUM -> "Int64 sum";
      case MIN -> "Int64 min";
      case MAX -> "Int64 max";
      case HLL -> "HyperLogLog++ unique count of Int64";
    };
  }
}
