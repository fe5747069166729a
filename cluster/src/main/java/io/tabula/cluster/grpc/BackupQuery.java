package io.tabula.cluster.grpc;

import com.google.bigtable.admin.v2.Backup;
import com.google.bigtable.admin.v2.ListBackupsResponse;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Comparator;
import java.util.EnumSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import org.apache.pekko.grpc.GrpcServiceException;

/**
 * One ListBackups query: its {@code filter} (see {@link BackupFilter}), its {@code order_by}
 * and its paging, applied to a list of backups, as the field comments of
 * {@code ListBackupsRequest} and AIP-132 describe them.
 *
 * <p><b>order_by</b> is one or more comma-separated fields among {@code name},
 * {@code source_table}, {@code expire_time}, {@code start_time}, {@code end_time},
 * {@code size_bytes} and {@code state}, each optionally followed by {@code asc} or
 * {@code desc} (any case; spaces around the words are insignificant; a field at most once).
 * Empty means {@code start_time desc}, the most recently started first. Ties are broken by
 * name, ascending, so the order is total and pages never overlap or skip a backup of an
 * unchanged list.
 *
 * <p><b>Paging</b>: a page holds at most {@code page_size} backups, where 0 or less means the
 * server's maximum, {@value #MAX_PAGE_SIZE}, and more is cut to it. A page token is opaque to
 * clients; it holds, in URL-safe base64 without padding:
 *
 * <pre>
 * offset  size  field
 *      0     1  version, {@value #TOKEN_VERSION}
 *      1     8  fingerprint: FNV-1a 64 of the normal forms of the filter and order_by (big-endian)
 *      9     4  offset of the page's first backup in the filtered, sorted list (big-endian)
 * </pre>
 *
 * A token is taken only by a query whose filter and order_by have the same normal form (spacing,
 * case, redundant parentheses and the default order do not count). It is an offset, not a
 * position in the keys: a backup created or deleted between two pages may shift the rest by one,
 * so a listing that races with changes can repeat or miss a backup near a page boundary; a token
 * past the end gives an empty last page.
 *
 * <p>Refusals are INVALID_ARGUMENT naming {@code filter}, {@code order_by} or
 * {@code page_token}; nothing else is thrown. Immutable: thread-safe.
 */
final class BackupQuery {
  /** The server's maximum page size, used when the request asks for 0 or less or for more. */
  static final int MAX_PAGE_SIZE = 1000;
  /** The longest order_by taken, in characters. */
  static final int MAX_ORDER_BY_LENGTH = 4096;

  private static final byte TOKEN_VERSION = 1;
  private static final int TOKEN_BYTES = 1 + 8 + 4;
  /** Longer than any token this class makes (18 characters), so no long string is decoded. */
  private static final int MAX_TOKEN_LENGTH = 64;
  private static final long FNV_OFFSET = 0xcbf29ce484222325L;
  private static final long FNV_PRIME = 0x100000001b3L;

  /** One field of order_by and its direction. */
  private record Key(BackupField field, boolean descending) {
    Comparator<Backup> comparator() {
      return descending ? field.ascending().reversed() : field.ascending();
    }

    @Override
    public String toString() {
      return field.wireName() + (descending ? " desc" : " asc");
    }
  }

  private static final List<Key> DEFAULT_ORDER = List.of(new Key(BackupField.START_TIME, true));

  private final BackupFilter filter;
  private final Comparator<Backup> order;
  private final long fingerprint;

  private BackupQuery(BackupFilter filter, List<Key> keys) {
    this.filter = filter;
    Comparator<Backup> c = keys.get(0).comparator();
    for (Key k : keys.subList(1, keys.size())) {
      c = c.thenComparing(k.comparator());
    }
    this.order = c.thenComparing(BackupField.NAME.ascending());
    this.fingerprint = fnv1a(filter.canonical() + "\n" + keys);
  }

  /**
   * Parses {@code filter} and {@code orderBy} (null is empty); throws GrpcServiceException,
   * INVALID_ARGUMENT naming {@code filter} or {@code order_by}.
   */
  static BackupQuery parse(String filter, String orderBy) {
    return new BackupQuery(BackupFilter.parse(filter), keys(orderBy == null ? "" : orderBy));
  }

  boolean matches(Backup b) {
    return filter.matches(b);
  }

  /** The order of order_by, then name ascending: a total order. */
  Comparator<Backup> order() {
    return order;
  }

  /**
   * The page of {@code all} (any order; filtered and sorted here) that {@code pageToken} starts
   * (empty: the first), of at most {@code pageSize}, with the token of the next page unless it is
   * the last.
   */
  ListBackupsResponse page(List<Backup> all, int pageSize, String pageToken) {
    int size = pageSize <= 0 ? MAX_PAGE_SIZE : Math.min(pageSize, MAX_PAGE_SIZE);
    int offset = pageToken == null || pageToken.isEmpty() ? 0 : offset(pageToken);
    List<Backup> matching = new ArrayList<>();
    for (Backup b : all) {
      if (filter.matches(b)) {
        matching.add(b);
      }
    }
    matching.sort(order);
    int from = Math.min(offset, matching.size());
    int to = (int) Math.min((long) from + size, matching.size());
    ListBackupsResponse.Builder page = ListBackupsResponse.newBuilder().addAllBackups(matching.subList(from, to));
    if (to < matching.size()) {
      page.setNextPageToken(token(to));
    }
    return page.build();
  }

  private String token(int offset) {
    ByteBuffer b = ByteBuffer.allocate(TOKEN_BYTES).put(TOKEN_VERSION).putLong(fingerprint).putInt(offset);
    return Base64.getUrlEncoder().withoutPadding().encodeToString(b.array());
  }

  /** The offset a token of this query holds; INVALID_ARGUMENT naming page_token for any other string. */
  private int offset(String token) {
    if (token.length() > MAX_TOKEN_LENGTH) {
      throw notOurs();
    }
    byte[] bytes;
    try {
      bytes = Base64.getUrlDecoder().decode(token);
    } catch (IllegalArgumentException e) {
      throw notOurs();
    }
    if (bytes.length != TOKEN_BYTES || bytes[0] != TOKEN_VERSION) {
      throw notOurs();
    }
    ByteBuffer b = ByteBuffer.wrap(bytes, 1, TOKEN_BYTES - 1);
    long madeFor = b.getLong();
    int offset = b.getInt();
    if (madeFor != fingerprint) {
      throw GrpcErrors.invalid("page_token", "was made for another filter or order_by; a page token continues "
          + "only the listing it came from");
    }
    if (offset < 0) {
      throw notOurs();
    }
    return offset;
  }

  private static GrpcServiceException notOurs() {
    return GrpcErrors.invalid("page_token", "is not a page token of this server; send the next_page_token of "
        + "the previous response unchanged, or none for the first page");
  }

  /** The keys of an order_by (blank: the default); INVALID_ARGUMENT naming order_by, with the position from 1. */
  private static List<Key> keys(String s) {
    if (s.length() > MAX_ORDER_BY_LENGTH) {
      throw GrpcErrors.invalid("order_by", "is " + s.length() + " characters long; at most " + MAX_ORDER_BY_LENGTH
          + " are allowed");
    }
    if (s.isBlank()) {
      return DEFAULT_ORDER;
    }
    List<Key> keys = new ArrayList<>();
    Set<BackupField> seen = EnumSet.noneOf(BackupField.class);
    int i = 0;
    while (true) {
      i = skipSpace(s, i);
      int at = i;
      i = word(s, i);
      String name = s.substring(at, i);
      if (name.isEmpty()) {
        throw orderError(at, "expected a field name, found " + found(s, at));
      }
      BackupField field = BackupField.named(name).orElseThrow(() -> orderError(at, "unknown field \""
          + name + "\"; the fields are " + BackupField.names()));
      if (!seen.add(field)) {
        throw orderError(at, field + " is named twice");
      }
      i = skipSpace(s, i);
      int directionAt = i;
      i = word(s, i);
      String direction = s.substring(directionAt, i).toLowerCase(Locale.ROOT);
      if (!direction.isEmpty() && !direction.equals("asc") && !direction.equals("desc")) {
        throw orderError(directionAt, "expected asc, desc, ',' or the end after " + field + ", found "
            + found(s, directionAt));
      }
      keys.add(new Key(field, direction.equals("desc")));
      i = skipSpace(s, i);
      if (i == s.length()) {
        return List.copyOf(keys);
      }
      if (s.charAt(i) != ',') {
        throw orderError(i, "expected ',' or the end after " + field + (direction.isEmpty() ? "" : " " + direction)
            + ", found " + found(s, i));
      }
      i++;
    }
  }

  private static int skipSpace(String s, int i) {
    while (i < s.length() && Character.isWhitespace(s.charAt(i))) {
      i++;
    }
    return i;
  }

  /** The end of the word of letters, digits and underscores at {@code i}. */
  private static int word(String s, int i) {
    while (i < s.length() && (Character.isLetterOrDigit(s.charAt(i)) || s.charAt(i) == '_')) {
      i++;
    }
    return i;
  }

  private static String found(String s, int at) {
    if (at >= s.length()) {
      return "the end";
    }
    int end = Math.min(Math.max(word(s, at), at + 1), at + 41);
    return "\"" + BackupFilter.shown(s.substring(at, end)) + "\"";
  }

  private static GrpcServiceException orderError(int at, String problem) {
    return GrpcErrors.invalid("order_by", "position " + (at + 1) + ": " + problem);
  }

  private static long fnv1a(String s) {
    long h = FNV_OFFSET;
    for (byte b : s.getBytes(StandardCharsets.UTF_8)) {
      h = (h ^ (b & 0xff)) * FNV_PRIME;
    }
    return h;
  }
}
