package io.tabula.cluster.client;

import com.google.protobuf.ByteString;
import io.tabula.client.Cell;
import io.tabula.client.Filter;
import io.tabula.client.Query;
import io.tabula.client.Row;
import io.tabula.client.RowMutation;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.Random;
import java.util.TreeMap;
import java.util.function.Predicate;
import java.util.function.UnaryOperator;

/**
 * A small table and what any {@link Query} over it must return, worked out here on a
 * {@code TreeMap}: the row set (keys, ranges, prefixes), then per cell the families and
 * columns asked for, the qualifier regex, the time range, a further filter and the newest n
 * versions, rows left with no cell dropped, the limit, the direction. Queries are drawn at
 * random from a seeded {@link Random} with every option, each with its expected answer.
 */
final class QueryModel {
  static final List<String> FAMILIES = List.of("f", "g");
  static final List<String> QUALIFIERS = List.of("a", "b", "c");
  static final long[] TIMESTAMPS = {10_000, 20_000, 30_000, 40_000};

  /** A query and the rows it must return. */
  record Case(String description, Query query, List<Row> expected) {}

  /** A further filter and what it does to a cell: drops it (null) or changes it. */
  private record Extra(String name, Filter filter, UnaryOperator<Cell> apply) {}

  private static final List<Extra> EXTRAS = List.of(
      new Extra("label l", Filter.label("l"), c -> new Cell(c.family(), c.qualifier(), c.timestampMicros(),
          c.value(), List.of("l"))),
      new Extra("value ends -30000", Filter.valueRegex(".*-30000"), c -> c.valueUtf8().endsWith("-30000") ? c : null),
      new Extra("strip value", Filter.stripValue(), c -> new Cell(c.family(), c.qualifier(), c.timestampMicros(),
          ByteString.EMPTY, c.labels())));

  private static final Map<String, Predicate<String>> QUALIFIER_REGEXES = Map.of(
      "a|b", q -> q.equals("a") || q.equals("b"),
      "[bc]", q -> q.equals("b") || q.equals("c"),
      "c", q -> q.equals("c"),
      "x.*", q -> false);

  private final String table;
  private final NavigableMap<ByteString, List<Cell>> rows = new TreeMap<>(
      ByteString.unsignedLexicographicalComparator());

  /**
   * Rows r00..r29 with random columns and versions, and keys around 0xff bytes for
   * prefixes that end in them; every value names its row, column and timestamp.
   */
  QueryModel(String table, Random random) {
    this.table = table;
    List<ByteString> keys = new ArrayList<>();
    for (int i = 0; i < 30; i++) {
      keys.add(ByteString.copyFromUtf8(String.format("r%02d", i)));
    }
    keys.add(bytes('s', 0xfe));
    keys.add(bytes('s', 0xff));
    keys.add(bytes('s', 0xff, 0x00));
    keys.add(bytes('s', 0xff, 0xff, 'x'));
    keys.add(bytes('t'));
    for (ByteString key : keys) {
      List<Cell> cells = new ArrayList<>();
      for (String f : FAMILIES) {
        for (String q : QUALIFIERS) {
          if (random.nextInt(3) == 0) {
            continue;
          }
          for (long ts : TIMESTAMPS) {
            if (random.nextInt(3) > 0) {
              cells.add(new Cell(f, ByteString.copyFromUtf8(q), ts, ByteString.copyFromUtf8(
                  name(key) + "-" + f + ":" + q + "-" + ts), List.of()));
            }
          }
        }
      }
      if (cells.isEmpty()) {
        cells.add(new Cell("f", ByteString.copyFromUtf8("a"), 10_000, ByteString.copyFromUtf8(name(key)
            + "-f:a-10000"), List.of()));
      }
      cells.sort(Comparator.comparing(Cell::family).thenComparing(Cell::qualifier,
          ByteString.unsignedLexicographicalComparator()).thenComparing(Comparator.comparingLong(
              Cell::timestampMicros).reversed()));
      rows.put(key, cells);
    }
  }

  /** The mutations that write the table, one per row, with explicit timestamps. */
  List<RowMutation> mutations() {
    List<RowMutation> out = new ArrayList<>();
    rows.forEach((key, cells) -> {
      RowMutation m = RowMutation.create(key);
      cells.forEach(c -> m.setCell(c.family(), c.qualifier(), c.timestampMicros(), c.value()));
      out.add(m);
    });
    return out;
  }

  /** Every row whole, in key order. */
  List<Row> all() {
    List<Row> out = new ArrayList<>();
    rows.forEach((k, cells) -> out.add(new Row(k, cells)));
    return out;
  }

  /** A query with a random selection of every option, and its answer. */
  Case randomCase(Random random) {
    Query q = Query.table(table);
    StringBuilder d = new StringBuilder();
    List<ByteString> keys = new ArrayList<>(rows.keySet());
    List<Predicate<ByteString>> rowSet = new ArrayList<>();
    int parts = random.nextInt(3) == 0 ? 0 : 1 + random.nextInt(3);
    for (int i = 0; i < parts; i++) {
      switch (random.nextInt(3)) {
        case 0 -> {
          ByteString k = random.nextInt(5) == 0 ? ByteString.copyFromUtf8("missing") : pick(random, keys);
          q.rowKey(k);
          rowSet.add(k::equals);
          d.append(" key ").append(name(k));
        }
        case 1 -> {
          ByteString start = random.nextInt(4) == 0 ? ByteString.EMPTY : pick(random, keys);
          ByteString end = random.nextInt(4) == 0 ? ByteString.EMPTY : pick(random, keys);
          if (!end.isEmpty() && compare(start, end) >= 0) {
            end = ByteString.EMPTY;
          }
          q.range(start, end);
          ByteString s = start;
          ByteString e = end;
          rowSet.add(k -> compare(k, s) >= 0 && (e.isEmpty() || compare(k, e) < 0));
          d.append(" range [").append(name(start)).append(", ").append(name(end)).append(")");
        }
        default -> {
          ByteString p = List.of(bytes('r', '1'), bytes('r'), bytes('s', 0xff), bytes('s', 0xff, 0xff), bytes('s'),
              bytes('r', '2', '9')).get(random.nextInt(6));
          q.prefix(p);
          rowSet.add(k -> k.startsWith(p));
          d.append(" prefix ").append(name(p));
        }
      }
    }

    List<Predicate<Cell>> columns = new ArrayList<>();
    if (random.nextInt(3) == 0) {
      String f = FAMILIES.get(random.nextInt(FAMILIES.size()));
      q.families(f);
      columns.add(c -> c.family().equals(f));
      d.append(" family ").append(f);
    }
    if (random.nextInt(3) == 0) {
      String f = FAMILIES.get(random.nextInt(FAMILIES.size()));
      String col = QUALIFIERS.get(random.nextInt(QUALIFIERS.size()));
      q.column(f, col);
      columns.add(c -> c.family().equals(f) && c.qualifierUtf8().equals(col));
      d.append(" column ").append(f).append(':').append(col);
    }
    Predicate<Cell> qualifier = c -> true;
    if (random.nextInt(3) == 0) {
      String regex = new ArrayList<>(new TreeMap<>(QUALIFIER_REGEXES).keySet()).get(random.nextInt(
          QUALIFIER_REGEXES.size()));
      q.qualifierRegex(regex);
      Predicate<String> p = QUALIFIER_REGEXES.get(regex);
      qualifier = c -> p.test(c.qualifierUtf8());
      d.append(" qualifier ").append(regex);
    }
    Predicate<Cell> time = c -> true;
    if (random.nextInt(3) == 0) {
      long from = TIMESTAMPS[random.nextInt(TIMESTAMPS.length)] - 10_000 * random.nextInt(2);
      long to = random.nextBoolean() ? 0 : from + 10_000 + 10_000 * random.nextInt(3);
      q.timeRange(from, to);
      time = c -> c.timestampMicros() >= from && (to == 0 || c.timestampMicros() < to);
      d.append(" time [").append(from).append(", ").append(to).append(")");
    }
    UnaryOperator<Cell> extra = c -> c;
    if (random.nextInt(4) == 0) {
      Extra e = EXTRAS.get(random.nextInt(EXTRAS.size()));
      q.filter(e.filter());
      extra = e.apply();
      d.append(" filter ").append(e.name());
    }
    int versions = 0;
    if (random.nextInt(3) == 0) {
      versions = 1 + random.nextInt(2);
      q.versions(versions);
      d.append(" versions ").append(versions);
    }
    long limit = 0;
    if (random.nextInt(3) == 0) {
      limit = 1 + random.nextInt(6);
      q.limit(limit);
      d.append(" limit ").append(limit);
    }
    boolean reversed = random.nextInt(3) == 0;
    if (reversed) {
      q.reversed();
      d.append(" reversed");
    }

    List<Row> expected = new ArrayList<>();
    for (Map.Entry<ByteString, List<Cell>> row : rows.entrySet()) {
      if (!rowSet.isEmpty() && rowSet.stream().noneMatch(p -> p.test(row.getKey()))) {
        continue;
      }
      List<Cell> cells = new ArrayList<>();
      Map<String, Integer> perColumn = new HashMap<>();
      for (Cell c : row.getValue()) {
        if (!columns.isEmpty() && columns.stream().noneMatch(p -> p.test(c))) {
          continue;
        }
        if (!qualifier.test(c) || !time.test(c)) {
          continue;
        }
        Cell out = extra.apply(c);
        if (out == null) {
          continue;
        }
        int seen = perColumn.merge(c.family() + ":" + c.qualifierUtf8(), 1, Integer::sum);
        if (versions == 0 || seen <= versions) {
          cells.add(out);
        }
      }
      if (!cells.isEmpty()) {
        expected.add(new Row(row.getKey(), cells));
      }
    }
    if (reversed) {
      Collections.reverse(expected);
    }
    if (limit > 0 && expected.size() > limit) {
      expected = expected.subList(0, (int) limit);
    }
    return new Case(d.length() == 0 ? " every row, every cell" : d.toString(), q, List.copyOf(expected));
  }

  /** Rows as one line each, {@code key: family:qualifier@micros=value[labels] ...}, for readable failures. */
  static List<String> render(List<Row> rows) {
    List<String> out = new ArrayList<>();
    for (Row r : rows) {
      StringBuilder s = new StringBuilder(name(r.key())).append(':');
      for (Cell c : r.cells()) {
        s.append(' ').append(c.family()).append(':').append(name(c.qualifier())).append('@')
            .append(c.timestampMicros()).append('=').append(name(c.value()));
        if (!c.labels().isEmpty()) {
          s.append(c.labels());
        }
      }
      out.add(s.toString());
    }
    return out;
  }

  private static ByteString pick(Random random, List<ByteString> keys) {
    return keys.get(random.nextInt(keys.size()));
  }

  private static int compare(ByteString a, ByteString b) {
    return ByteString.unsignedLexicographicalComparator().compare(a, b);
  }

  static ByteString bytes(int... b) {
    byte[] out = new byte[b.length];
    for (int i = 0; i < b.length; i++) {
      out[i] = (byte) b[i];
    }
    return ByteString.copyFrom(out);
  }

  /** A key for messages: printable ASCII as it is, other bytes as \xHH. */
  static String name(ByteString key) {
    StringBuilder s = new StringBuilder();
    for (byte b : key.toByteArray()) {
      int c = b & 0xff;
      s.append(c >= 0x20 && c < 0x7f ? String.valueOf((char) c) : String.format("\\x%02x", c));
    }
    return s.length() == 0 ? "''" : s.toString();
  }
}
