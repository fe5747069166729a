package io.tabula.cluster.grpc;

import com.google.bigtable.v2.Mutation;
import com.google.bigtable.v2.ReadModifyWriteRule;
import com.google.bigtable.v2.RowFilter;
import com.google.protobuf.ByteString;
import io.tabula.actors.master.TableInfo;
import io.tabula.actors.master.ViewInfo;
import io.tabula.cluster.routing.Router;
import io.tabula.persistence.encoding.ByteArrays;
import io.tabula.protocol.errors.ErrorCode;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Authorized views on the data path: a request names a table ({@code table_name}) or one of
 * its views ({@code authorized_view_name}), and through a view it reads only the view's rows
 * (its row prefixes) and columns (its family subsets), and writes nothing outside them
 * (PERMISSION_DENIED naming the mutation). A read's rows are its row set intersected with the
 * view's prefixes; its filter is the view's columns, then the caller's. Stateless.
 */
final class Views {
  private static final Pattern VIEW = Pattern.compile(
      "projects/[^/]+/instances/[^/]+/tables/([^/]+)/authorizedViews/([^/]+)");
  private static final String ANY_BYTES = "[\\x00-\\xff]*";

  private Views() {}

  /** What a data request reads or writes: a table, through one of its views or not. */
  record Target(String table, Optional<ViewInfo> view) {}

  /** The target of a request with {@code tableName} and {@code viewName} (exactly one of them set). */
  static Target of(Router router, String tableName, String viewName) {
    if (viewName.isEmpty()) {
      return new Target(Names.tableId("table_name", tableName), Optional.empty());
    }
    if (!tableName.isEmpty()) {
      throw GrpcErrors.invalid("authorized_view_name", "a request names a table or one of its authorized views,"
          + " not both (table_name is set too)");
    }
    Matcher m = VIEW.matcher(viewName);
    if (!m.matches()) {
      throw GrpcErrors.invalid("authorized_view_name", "'" + viewName + "' is not an authorized view name of the"
          + " form projects/{project}/instances/{instance}/tables/{table}/authorizedViews/{authorized_view}");
    }
    String table = Names.checkTableId("authorized_view_name", m.group(1));
    TableInfo t = router.directory().table(table);
    ViewInfo v = t == null ? null : t.access().views().get(m.group(2));
    if (v == null) {
      throw GrpcErrors.notFound("authorized view " + m.group(2) + " of table " + table + " not found");
    }
    return new Target(table, Optional.of(v));
  }

  /** {@code ranges} (sorted, disjoint) within {@code v}'s rows, sorted and disjoint. */
  static List<RowRanges.Range> rows(ViewInfo v, List<RowRanges.Range> ranges) {
    ViewIndex index = ViewIndex.of(v);
    if (index.everyRow()) {
      return ranges;
    }
    List<RowRanges.Range> out = new ArrayList<>();
    for (RowRanges.Range r : ranges) {
      // The view's prefixes' ranges are sorted and disjoint: those that overlap r follow one another.
      for (int i = index.firstOverlapping(r.start()); i < index.prefixCount(); i++) {
        byte[] qStart = index.prefixStart(i);
        byte[] qEnd = index.prefixEnd(i);
        if (r.end().length > 0 && ByteArrays.compare(qStart, r.end()) >= 0) {
          break;
        }
        byte[] start = ByteArrays.compare(r.start(), qStart) >= 0 ? r.start() : qStart;
        byte[] end = r.end().length == 0 ? qEnd : qEnd.length == 0 ? r.end()
            : ByteArrays.compare(r.end(), qEnd) <= 0 ? r.end() : qEnd;
        if (end.length == 0 || ByteArrays.compare(start, end) < 0) {
          out.add(new RowRanges.Range(start, end, r.single()));
        }
      }
    }
    return out;
  }

  /** The filter of a read through {@code v}: its columns, then {@code caller}'s filter (null: none). */
  static RowFilter filter(ViewInfo v, RowFilter caller) {
    RowFilter.Interleave.Builder families = RowFilter.Interleave.newBuilder();
    v.families().forEach((family, subset) -> {
      RowFilter inFamily = RowFilter.newBuilder().setFamilyNameRegexFilter(quoted(family)).build();
      if (subset.whole()) {
        families.addFilters(inFamily);
        return;
      }
      RowFilter.Interleave.Builder columns = RowFilter.Interleave.newBuilder();
      subset.qualifiers().forEach(q -> columns.addFilters(qualifier(quotedBytes(q))));
      subset.qualifierPrefixes().forEach(p -> columns.addFilters(qualifier(quotedBytes(p) + ANY_BYTES)));
      families.addFilters(RowFilter.newBuilder().setChain(RowFilter.Chain.newBuilder().addFilters(inFamily)
          .addFilters(columns.getFiltersCount() == 1 ? columns.getFilters(0) : interleave(columns))));
    });
    RowFilter view = families.getFiltersCount() == 0 ? RowFilter.newBuilder().setBlockAllFilter(true).build()
        : families.getFiltersCount() == 1 ? families.getFilters(0) : RowFilter.newBuilder().setInterleave(families)
        .build();
    // A filter with nothing set is no filter at the top of a request, but an error inside a chain.
    return caller == null || caller.equals(RowFilter.getDefaultInstance()) ? view
        : RowFilter.newBuilder().setChain(RowFilter.Chain.newBuilder().addFilters(view).addFilters(caller)).build();
  }

  /** Refuses (PERMISSION_DENIED, naming {@code field}) a write of row {@code row} that {@code v} does not hold. */
  static void checkRow(ViewInfo v, String field, ByteString row) {
    if (!ViewIndex.of(v).hasRow(row.toString(StandardCharsets.ISO_8859_1))) {
      throw outside(field, "row key is outside authorized view " + v.name() + " (its row prefixes)");
    }
  }

  /** Refuses any of {@code mutations} (of the row {@link #checkRow} passed) that writes outside {@code v}. */
  static void checkMutations(ViewInfo v, String field, List<Mutation> mutations) {
    for (int i = 0; i < mutations.size(); i++) {
      Mutation m = mutations.get(i);
      String at = field + "[" + i + "]";
      switch (m.getMutationCase()) {
        case SET_CELL -> checkColumn(v, at + ".set_cell", m.getSetCell().getFamilyName(),
            m.getSetCell().getColumnQualifier());
        case DELETE_FROM_COLUMN -> checkColumn(v, at + ".delete_from_column", m.getDeleteFromColumn().getFamilyName(),
            m.getDeleteFromColumn().getColumnQualifier());
        case ADD_TO_CELL -> checkColumn(v, at + ".add_to_cell", m.getAddToCell().getFamilyName(),
            m.getAddToCell().getColumnQualifier().getRawValue());
        case MERGE_TO_CELL -> checkColumn(v, at + ".merge_to_cell", m.getMergeToCell().getFamilyName(),
            m.getMergeToCell().getColumnQualifier().getRawValue());
        case DELETE_FROM_FAMILY -> {
          ViewInfo.FamilySubset s = v.families().get(m.getDeleteFromFamily().getFamilyName());
          if (s == null || !s.whole()) {
            throw outside(at + ".delete_from_family", "family " + m.getDeleteFromFamily().getFamilyName()
                + " is not wholly in authorized view " + v.name());
          }
        }
        case DELETE_FROM_ROW -> throw outside(at + ".delete_from_row", "a whole row cannot be deleted through"
            + " authorized view " + v.name());
        default -> { } // MUTATION_NOT_SET: refused by the mutation's own checks
      }
    }
  }

  /** Refuses any of {@code rules} that changes a column outside {@code v}. */
  static void checkRules(ViewInfo v, List<ReadModifyWriteRule> rules) {
    for (int i = 0; i < rules.size(); i++) {
      checkColumn(v, "rules[" + i + "]", rules.get(i).getFamilyName(), rules.get(i).getColumnQualifier());
    }
  }

  /** Whether row key {@code key} is in {@code v}. */
  static boolean hasRow(ViewInfo v, byte[] key) {
    return ViewIndex.of(v).hasRow(new String(key, StandardCharsets.ISO_8859_1));
  }

  private static void checkColumn(ViewInfo v, String field, String family, ByteString qualifier) {
    if (!ViewIndex.of(v).hasColumn(family, qualifier.toString(StandardCharsets.ISO_8859_1))) {
      throw outside(field, "column " + family + ":" + qualifier.toStringUtf8() + " is outside authorized view "
          + v.name());
    }
  }

  private static RuntimeException outside(String field, String problem) {
    return GrpcErrors.status(ErrorCode.PERMISSION_DENIED, field + ": " + problem, field);
  }

  private static RowFilter qualifier(String regex) {
    return RowFilter.newBuilder().setColumnQualifierRegexFilter(ByteString.copyFrom(regex,
        StandardCharsets.ISO_8859_1)).build();
  }

  private static RowFilter interleave(RowFilter.Interleave.Builder columns) {
    return RowFilter.newBuilder().setInterleave(columns).build();
  }

  /** A regex matching exactly {@code text} (a family name). */
  private static String quoted(String text) {
    StringBuilder out = new StringBuilder();
    for (char c : text.toCharArray()) {
      if (!Character.isLetterOrDigit(c) && c != '_') {
        out.append('\\');
      }
      out.append(c);
    }
    return out.toString();
  }

  /** A byte regex matching exactly the bytes {@code latin1} holds, each as {@code \xHH}. */
  private static String quotedBytes(String latin1) {
    StringBuilder out = new StringBuilder();
    for (int i = 0; i < latin1.length(); i++) {
      out.append(String.format("\\x%02x", (int) latin1.charAt(i)));
    }
    return out.toString();
  }

}
