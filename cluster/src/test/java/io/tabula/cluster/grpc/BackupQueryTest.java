package io.tabula.cluster.grpc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.bigtable.admin.v2.Backup;
import com.google.bigtable.admin.v2.ListBackupsResponse;
import com.google.protobuf.Timestamp;
import io.grpc.Status;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;
import org.apache.pekko.grpc.GrpcServiceException;
import org.junit.jupiter.api.Test;

/**
 * ListBackups' filter, order_by and paging: every field and operator, the examples of the
 * proto's field comment as written, the logic and its precedence, the default and multi-field
 * orders, paging through thousands of backups, tokens refused for another query, malformed
 * input refused naming its field, and random input that only ever ends in a refusal.
 */
class BackupQueryTest {
  private static final String CLUSTER = "projects/p/instances/i/clusters/c/backups/";
  private static final String TABLES = "projects/p/instances/i/tables/";

  private static Timestamp at(String rfc3339) {
    Instant t = Instant.parse(rfc3339);
    return Timestamp.newBuilder().setSeconds(t.getEpochSecond()).setNanos(t.getNano()).build();
  }

  private static Backup backup(String id, String table, Backup.State state, String start, String end, long size) {
    Backup.Builder b = Backup.newBuilder().setName(CLUSTER + id).setSourceTable(TABLES + table).setState(state)
        .setStartTime(at(start)).setExpireTime(at(start.replace("2018-03", "2018-04"))).setSizeBytes(size);
    if (end != null) {
      b.setEndTime(at(end));
    }
    return b.build();
  }

  /** Four backups: two "howl" ones from prod tables (one still being made), "exact", and "Exact-Copy". */
  private static final List<Backup> FOUR = List.of(
      backup("howl-1", "prod-users", Backup.State.READY, "2018-03-28T14:00:00Z", "2018-03-28T14:10:00Z",
          20_000_000_000L),
      backup("howl-2", "prod-orders", Backup.State.CREATING, "2018-03-29T00:00:00Z", null, 0),
      backup("exact", "staging", Backup.State.READY, "2018-03-27T10:00:00Z", "2018-03-27T10:05:00.5Z",
          5_000_000_000L),
      backup("Exact-Copy", "Prod-Archive", Backup.State.READY, "2018-03-30T00:00:00Z", "2018-03-30T01:00:00Z",
          10_000_000_000L));

  /** The ids of the backups of {@link #FOUR} that {@code filter} matches. */
  private static Set<String> match(String filter) {
    BackupQuery q = BackupQuery.parse(filter, "");
    Set<String> ids = new TreeSet<>();
    for (Backup b : FOUR) {
      if (q.matches(b)) {
        ids.add(b.getName().substring(CLUSTER.length()));
      }
    }
    return ids;
  }

  private static Set<String> ids(String... ids) {
    return new TreeSet<>(List.of(ids));
  }

  private static final Set<String> ALL = ids("howl-1", "howl-2", "exact", "Exact-Copy");

  /** Asserts that the request is refused with INVALID_ARGUMENT naming {@code field}; the message. */
  private static String refused(String field, Runnable request) {
    GrpcServiceException e = assertThrows(GrpcServiceException.class, request::run);
    assertEquals(Status.Code.INVALID_ARGUMENT, e.getStatus().getCode());
    String message = e.getStatus().getDescription();
    assertTrue(message.startsWith(field + ": "), message);
    return message;
  }

  private static String refusedFilter(String filter) {
    return refused("filter", () -> BackupQuery.parse(filter, ""));
  }

  @Test
  void theExamplesOfTheProtoCommentMeanWhatItSays() {
    assertEquals(ids("exact"), match("name:\"exact\""), "HAS of a quoted string: the name itself, as the API's example");
    assertEquals(ids("exact", "Exact-Copy"), match("name:exact"), "HAS of a bare word: contains, any case");
    assertEquals(ids("howl-1", "howl-2"), match("name:howl"));
    assertEquals(ids("howl-1", "howl-2", "Exact-Copy"), match("source_table:prod"));
    assertEquals(ids("howl-2"), match("state:CREATING"));
    assertEquals(ids("howl-1", "exact", "Exact-Copy"), match("state:READY"));
    assertEquals(ids("howl-1"), match("(name:howl) AND (start_time < \"2018-03-28T14:50:00Z\")"));
    assertEquals(ids("howl-1"), match("size_bytes > 10000000000"));
  }

  @Test
  void anEmptyFilterMatchesEveryBackup() {
    assertEquals(ALL, match(""));
    assertEquals(ALL, match("  \t\n "));
    assertTrue(BackupQuery.parse(null, null).matches(FOUR.get(0)));
  }

  @Test
  void sizeBytesTakesEveryOperator() {
    assertEquals(ids("Exact-Copy"), match("size_bytes = 10000000000"));
    assertEquals(ids("Exact-Copy"), match("size_bytes:10000000000"), "HAS on a number is equality");
    assertEquals(ids("howl-1", "howl-2", "exact"), match("size_bytes != 10000000000"));
    assertEquals(ids("howl-2", "exact"), match("size_bytes < 10000000000"));
    assertEquals(ids("howl-2", "exact", "Exact-Copy"), match("size_bytes <= 10000000000"));
    assertEquals(ids("howl-1"), match("size_bytes > 10000000000"));
    assertEquals(ids("howl-1", "Exact-Copy"), match("size_bytes >= 10000000000"));
    assertEquals(ALL, match("size_bytes > -1"));
    assertEquals(ids("howl-2"), match("size_bytes=\"0\""), "a quoted number is a number");
  }

  @Test
  void timesTakeEveryOperatorAndCompareAsInstants() {
    assertEquals(ids("howl-1"), match("start_time = 2018-03-28T14:00:00Z"), "a bare timestamp");
    assertEquals(ids("howl-1"), match("start_time:\"2018-03-28T14:00:00Z\""), "HAS on a time is equality");
    assertEquals(ids("howl-1"), match("start_time = 2018-03-28T16:00:00+02:00"), "the same instant");
    assertEquals(ids("howl-1"), match("start_time = 2018-03-28T14:00:00.000000000Z"));
    assertEquals(ids("howl-2", "exact", "Exact-Copy"), match("start_time != 2018-03-28T14:00:00Z"));
    assertEquals(ids("exact"), match("start_time < 2018-03-28T14:00:00Z"));
    assertEquals(ids("howl-1", "exact"), match("start_time <= 2018-03-28T14:00:00Z"));
    assertEquals(ids("howl-2", "Exact-Copy"), match("start_time > 2018-03-28T14:00:00Z"));
    assertEquals(ids("howl-1", "howl-2", "Exact-Copy"), match("start_time >= 2018-03-28T14:00:00Z"));
    assertEquals(ids("howl-1", "howl-2", "Exact-Copy"), match("start_time > 2018-03-28T13:59:59.999999999Z"));
    assertEquals(ids("exact"), match("end_time = 2018-03-27T10:05:00.5Z"), "fractional seconds");
    assertEquals(ids("exact"), match("end_time < 2018-03-27T10:05:00.500000001Z"));
    assertEquals(ids("howl-1", "howl-2"),
        match("expire_time >= 2018-04-28T14:00:00z AND expire_time < 2018-04-30t00:00:00Z"));
  }

  @Test
  void anUnsetTimeSatisfiesOnlyNotEqualAndIsAbsent() {
    assertEquals(ids("howl-1", "exact", "Exact-Copy"), match("end_time < 2100-01-01T00:00:00Z"));
    assertEquals(ids(), match("end_time = 1970-01-01T00:00:00Z"), "unset is not the epoch");
    assertEquals(ALL, match("end_time != 1970-01-01T00:00:00Z"));
    assertEquals(ids("howl-1", "exact", "Exact-Copy"), match("end_time:*"));
    assertEquals(ids("howl-2"), match("NOT end_time:*"));
    assertEquals(ids("howl-1", "exact", "Exact-Copy"), match("size_bytes:*"), "a number is present when not 0");
    assertEquals(ids(), match("name:\"*\""), "a quoted star is a star");
  }

  @Test
  void stateIsComparedByNameAndOrderedByNumber() {
    assertEquals(ids("howl-2"), match("state = CREATING"));
    assertEquals(ids("howl-1", "exact", "Exact-Copy"), match("state != CREATING"));
    assertEquals(ids("howl-2"), match("state < READY"));
    assertEquals(ids("howl-2"), match("state <= CREATING"));
    assertEquals(ids("howl-1", "exact", "Exact-Copy"), match("state > CREATING"));
    assertEquals(ALL, match("state >= CREATING"));
    assertEquals(ids("howl-2"), match("state:\"creating\""));
  }

  @Test
  void textHasIsContainsOfTheFullName() {
    assertEquals(ALL, match("name:backups/"), "the full name, not only the id");
    assertEquals(ALL, match("name:projects/p/instances/i/clusters/c"));
    assertEquals(ids("howl-1"), match("name:\"howl-1\""));
    assertEquals(ids("howl-1", "howl-2", "Exact-Copy"), match("source_table:tables/prod-"));
    assertEquals(ids(), match("name:\"\""), "a quoted value is the name itself, and no name is empty");
  }

  @Test
  void textEqualityIsTheIdOrTheFullName() {
    assertEquals(ids("exact"), match("name = exact"));
    assertEquals(ids("exact"), match("name = \"" + CLUSTER + "exact\""));
    assertEquals(ids(), match("name = \"backups/exact\""), "neither the id nor the full name");
    assertEquals(ids("howl-1", "howl-2", "Exact-Copy"), match("name != exact"));
    assertEquals(ids("exact"), match("source_table = staging"));
    assertEquals(ids("exact"), match("source_table = \"" + TABLES + "staging\""));
  }

  @Test
  void textOrderCompareTheIdOrWithASlashTheFullName() {
    assertEquals(ids("exact", "Exact-Copy"), match("name < f"), "ids, in lower case");
    assertEquals(ids("exact"), match("name <= exact"));
    assertEquals(ids("howl-1", "howl-2"), match("name > exact-copy"));
    assertEquals(ids("howl-1", "howl-2", "Exact-Copy"), match("name >= exact-copy"));
    assertEquals(ids("howl-1", "howl-2"), match("name >= \"" + CLUSTER + "h\""));
    assertEquals(ids("howl-2", "Exact-Copy"), match("source_table < \"" + TABLES + "prod-p\""));
  }

  @Test
  void theRulesAreCaseInsensitive() {
    assertEquals(ids("howl-1", "howl-2"), match("NAME:HOWL"));
    assertEquals(ids("howl-1", "howl-2", "Exact-Copy"), match("Source_Table:PROD"));
    assertEquals(ids("howl-1"), match("name:howl and state:ready"));
    assertEquals(ids("howl-1", "exact"), match("name:howl-1 Or Name:\"EXACT\" aNd NOT name:copy"));
    assertEquals(ids("howl-1"), match("start_time < 2018-03-28t14:50:00z name:Howl"));
    assertEquals(ids("Exact-Copy"), match("name = EXACT-COPY"));
  }

  @Test
  void andOrNotParenthesesAndSideBySide() {
    assertEquals(ids("howl-1"), match("name:howl state:READY"), "side by side is AND");
    assertEquals(ids("howl-1"), match("name:howl AND state:READY"));
    assertEquals(ids("howl-2", "exact", "Exact-Copy"), match("name:exact OR state:CREATING"));
    assertEquals(ids("exact", "Exact-Copy"), match("NOT name:howl"));
    assertEquals(ids("exact", "Exact-Copy"), match("-name:howl"), "AIP-160's minus is NOT");
    assertEquals(ids("howl-1", "howl-2"), match("NOT NOT name:howl"));
    assertEquals(ids("howl-2"), match("NOT (name:exact OR state:READY)"));
    assertEquals(ids("howl-1", "howl-2"), match("((name:howl))"));
    assertEquals(ids("howl-1", "Exact-Copy"), match("(name:howl OR name:copy) AND (size_bytes >= 10000000000)"));
    assertEquals(ids("howl-1"), match("(name:howl)(state:READY)"), "parentheses side by side");
    assertEquals(ids("howl-1"), match("name:howl AND(state:READY)"));
  }

  @Test
  void orBindsTighterThanAndAsInAip160() {
    // a AND b OR c is a AND (b OR c), not (a AND b) OR c.
    assertEquals(ids("howl-1"), match("name:howl AND state:READY OR name:exact"));
    assertEquals(ids("howl-1"), match("name:howl state:READY OR name:exact"));
    assertEquals(ids("howl-1", "exact", "Exact-Copy"), match("(name:howl AND state:READY) OR name:exact"));
    // a OR b c is (a OR b) AND c.
    assertEquals(ids("howl-1", "exact", "Exact-Copy"), match("name:exact OR name:howl state:READY"));
  }

  @Test
  void quotedValuesTakeEscapesAndSingleQuotes() {
    Backup odd = Backup.newBuilder().setName(CLUSTER + "say\"hi\\there'").build();
    assertTrue(BackupQuery.parse("name:\"say\\\"hi\\\\there'\"", "").matches(odd));
    assertTrue(BackupQuery.parse("name:'say\"hi\\\\there\\''", "").matches(odd));
    assertTrue(BackupQuery.parse("name:\"a (b) OR c\"", "").matches(
        Backup.newBuilder().setName(CLUSTER + "A (b) or c").build()), "operators inside quotes are text");
    assertTrue(BackupQuery.parse("name:o'brien", "").matches(Backup.newBuilder().setName(CLUSTER + "o'brien").build()));
  }

  @Test
  void malformedFiltersAreRefusedNamingTheFilterAndThePosition() {
    assertTrue(refusedFilter("foo:bar").contains("position 1: unknown field \"foo\""));
    assertTrue(refusedFilter("name:howl size:3").contains("position 11: unknown field \"size\""));
    assertTrue(refusedFilter("name").contains("position 5: expected an operator"));
    assertTrue(refusedFilter("name:").contains("position 6: expected a value, found the end"));
    assertTrue(refusedFilter("name ~ x").contains("found \"~\""));
    assertTrue(refusedFilter("name ! x").contains("expected an operator"));
    assertTrue(refusedFilter("name == x").contains("expected a value"));
    assertTrue(refusedFilter("size_bytes > ten").contains("size_bytes takes a whole number, not \"ten\""));
    assertTrue(refusedFilter("size_bytes > 1.5").contains("whole number"));
    assertTrue(refusedFilter("size_bytes > 99999999999999999999").contains("whole number"));
    assertTrue(refusedFilter("size_bytes > 9999999999999999999").contains("out of range"));
    assertTrue(refusedFilter("start_time < 2018-02-30T00:00:00Z").contains("start_time takes a timestamp"));
    assertTrue(refusedFilter("end_time < yesterday").contains("position 12"));
    assertTrue(refusedFilter("expire_time < 2018-03-28").contains("timestamp"));
    assertTrue(refusedFilter("expire_time < 2018-03-28T24:00:00Z").contains("timestamp"));
    assertTrue(refusedFilter("expire_time < 2018-03-28T14:50:00.1234567890Z").contains("timestamp"));
    assertTrue(refusedFilter("expire_time < 2018-03-28T14:50:00+25:00").contains("timestamp"));
    assertTrue(refusedFilter("state:DONE").contains("state is one of STATE_UNSPECIFIED, CREATING, READY"));
    assertTrue(refusedFilter("(name:howl").contains("position 1: this '(' is never closed"));
    assertTrue(refusedFilter("name:howl)").contains("position 10: ')' without a '('"));
    assertTrue(refusedFilter("()").contains("empty parentheses"));
    assertTrue(refusedFilter("name:howl AND").contains("found the end of the filter"));
    assertTrue(refusedFilter("AND name:howl").contains("found the keyword AND"));
    assertTrue(refusedFilter("name:howl OR OR name:x").contains("found the keyword OR"));
    assertTrue(refusedFilter("name:\"open").contains("position 6: this string is never closed"));
    assertTrue(refusedFilter("name:\"bad \\q\"").contains("unknown escape \\q"));
    assertTrue(refusedFilter("NOT").contains("found the end"));
    assertTrue(refusedFilter("-").contains("found the end"));
    assertTrue(refusedFilter("name:x = y").contains("expected a field name, found \"=\""));
    assertTrue(refusedFilter("howl").contains("unknown field \"howl\""), "a bare word alone is not a comparison");
    assertTrue(refusedFilter("name.id:howl").contains("found \".id:howl\""));
    assertTrue(refusedFilter("name:\"x\\\ud800\"").contains("unknown escape \\\\ud800"), "a lone surrogate, escaped");
    assertTrue(refusedFilter("\0").contains("found \"\\u0000\""), "a control character, escaped");
    assertTrue(refusedFilter("x".repeat(100)).contains("\"" + "x".repeat(40) + "...\""), "a long word, cut");
  }

  @Test
  void nestingDeeperThanFiftyIsRefused() {
    String fifty = "(".repeat(50) + "name:howl" + ")".repeat(50);
    assertEquals(ids("howl-1", "howl-2"), match(fifty));
    assertTrue(refusedFilter("(" + fifty + ")").contains("position 51: nested more than 50 deep"));
    assertEquals(ids("howl-1", "howl-2"), match("NOT ".repeat(50) + "name:howl"));
    refusedFilter("NOT ".repeat(51) + "name:howl");
    refusedFilter("-(".repeat(26) + "name:howl" + ")".repeat(26));
    refusedFilter("(".repeat(4000));
    refusedFilter("-".repeat(4096));
  }

  @Test
  void aFilterLongerThan4096CharactersIsRefused() {
    String longest = "name:" + "a".repeat(BackupFilter.MAX_LENGTH - 5);
    assertEquals(ids(), match(longest));
    assertTrue(refusedFilter(longest + "a").contains("4097 characters long"));
  }

  private static List<String> sorted(String orderBy, List<Backup> backups) {
    List<Backup> copy = new ArrayList<>(backups);
    copy.sort(BackupQuery.parse("", orderBy).order());
    return copy.stream().map(b -> b.getName().substring(CLUSTER.length())).toList();
  }

  private static Backup sized(String id, long size, Backup.State state, String table) {
    return Backup.newBuilder().setName(CLUSTER + id).setSourceTable(TABLES + table).setSizeBytes(size)
        .setState(state).setStartTime(at("2020-01-01T00:00:00Z")).build();
  }

  @Test
  void theDefaultOrderIsTheMostRecentlyStartedFirstThenName() {
    List<String> order = List.of("Exact-Copy", "howl-2", "howl-1", "exact");
    assertEquals(order, sorted("", FOUR));
    assertEquals(order, sorted("start_time desc", FOUR));
    List<Backup> tied = List.of(sized("b", 1, Backup.State.READY, "t"), sized("c", 1, Backup.State.READY, "t"),
        sized("a", 1, Backup.State.READY, "t"));
    assertEquals(List.of("a", "b", "c"), sorted("", tied), "same start: by name, ascending");
  }

  @Test
  void orderByTakesOneOrMoreFieldsAscendingByDefault() {
    assertEquals(List.of("howl-2", "exact", "Exact-Copy", "howl-1"), sorted("size_bytes", FOUR));
    assertEquals(List.of("howl-1", "Exact-Copy", "exact", "howl-2"), sorted("size_bytes desc", FOUR));
    assertEquals(List.of("exact", "howl-1", "howl-2", "Exact-Copy"), sorted("start_time asc", FOUR));
    assertEquals(List.of("exact", "howl-1", "howl-2", "Exact-Copy"), sorted("expire_time", FOUR));
    assertEquals(List.of("howl-2", "exact", "howl-1", "Exact-Copy"), sorted("end_time", FOUR), "unset first");
    assertEquals(List.of("Exact-Copy", "exact", "howl-1", "howl-2"), sorted("name", FOUR), "by character, case counts");
    assertEquals(List.of("howl-2", "howl-1", "exact", "Exact-Copy"), sorted("name desc", FOUR));
    assertEquals(List.of("Exact-Copy", "howl-2", "howl-1", "exact"), sorted("source_table", FOUR));
    assertEquals(List.of("howl-2", "Exact-Copy", "howl-1", "exact"), sorted("state, start_time desc", FOUR));
    assertEquals(List.of("Exact-Copy", "howl-1", "exact", "howl-2"),
        sorted("  State   DESC ,Source_Table  ASC  ", FOUR), "spaces and case do not count");
    List<Backup> grid = List.of(sized("a", 2, Backup.State.READY, "x"), sized("b", 1, Backup.State.READY, "y"),
        sized("c", 2, Backup.State.READY, "y"), sized("d", 1, Backup.State.READY, "x"),
        sized("e", 2, Backup.State.READY, "x"));
    assertEquals(List.of("a", "e", "c", "d", "b"), sorted("size_bytes desc, source_table", grid),
        "ties of both fields by name");
    assertEquals(List.of("c", "a", "e", "b", "d"), sorted("size_bytes desc, source_table desc", grid));
  }

  @Test
  void malformedOrderByIsRefusedNamingIt() {
    for (String bad : List.of("foo", "name up", "name,", ",name", "name name", "name desc desc", "name;state",
        "name, name desc", "name.x", "labels", "state asc,,name")) {
      refused("order_by", () -> BackupQuery.parse("", bad));
    }
    assertTrue(refused("order_by", () -> BackupQuery.parse("", "name, size desc"))
        .contains("position 7: unknown field \"size\""));
    assertTrue(refused("order_by", () -> BackupQuery.parse("", "name, name desc")).contains("named twice"));
    refused("order_by", () -> BackupQuery.parse("", "name" + " ".repeat(BackupQuery.MAX_ORDER_BY_LENGTH)));
  }

  private static List<Backup> many(int n) {
    List<Backup> all = new ArrayList<>();
    Random random = new Random(7);
    for (int i = 0; i < n; i++) {
      // Many share a start time, so the order rests on the tie-break by name.
      all.add(Backup.newBuilder().setName(CLUSTER + String.format("b%05d", random.nextInt(1_000_000)) + "-" + i)
          .setSourceTable(TABLES + "t").setState(i % 2 == 0 ? Backup.State.READY : Backup.State.CREATING)
          .setStartTime(Timestamp.newBuilder().setSeconds(1_500_000_000L + i % 40)).setSizeBytes(i).build());
    }
    return all;
  }

  /** Every page of {@code q} over {@code all} by {@code pageSize}, checking each page's size. */
  private static List<Backup> pageThrough(BackupQuery q, List<Backup> all, int pageSize, int expectedPerPage) {
    List<Backup> seen = new ArrayList<>();
    String token = "";
    int pages = 0;
    do {
      ListBackupsResponse page = q.page(all, pageSize, token);
      pages++;
      token = page.getNextPageToken();
      if (!token.isEmpty()) {
        assertEquals(expectedPerPage, page.getBackupsCount(), "every page but the last is full");
      } else {
        assertTrue(page.getBackupsCount() <= expectedPerPage && page.getBackupsCount() > 0);
      }
      seen.addAll(page.getBackupsList());
      assertTrue(pages < 10_000);
    } while (!token.isEmpty());
    return seen;
  }

  private static List<Backup> expected(List<Backup> all, java.util.function.Predicate<Backup> keep) {
    List<Backup> e = new ArrayList<>(all.stream().filter(keep).toList());
    e.sort(Comparator.comparingLong((Backup b) -> b.getStartTime().getSeconds()).reversed()
        .thenComparing(Backup::getName));
    return e;
  }

  @Test
  void pagingWithNoPageSizeGivesTheServersMaximumOf1000() {
    List<Backup> all = many(2500);
    BackupQuery q = BackupQuery.parse("", "");
    ListBackupsResponse first = q.page(all, 0, "");
    assertEquals(1000, first.getBackupsCount());
    ListBackupsResponse second = q.page(all, 0, first.getNextPageToken());
    assertEquals(1000, second.getBackupsCount());
    ListBackupsResponse third = q.page(all, 0, second.getNextPageToken());
    assertEquals(500, third.getBackupsCount());
    assertEquals("", third.getNextPageToken(), "the last page has no next token");
    assertEquals(expected(all, b -> true), pageThrough(q, all, 0, 1000));
    assertEquals(expected(all, b -> true), pageThrough(q, all, -5, 1000), "less than 0 is the maximum too");
    assertEquals(expected(all, b -> true), pageThrough(q, all, 5000, 1000), "more than the maximum is cut to it");
  }

  @Test
  void pagingBySevenVisitsEveryBackupOnceInOrder() {
    List<Backup> all = many(2500);
    List<Backup> seen = pageThrough(BackupQuery.parse("", ""), all, 7, 7);
    assertEquals(expected(all, b -> true), seen);
    assertEquals(2500, new HashSet<>(seen).size());
    List<Backup> ready = pageThrough(BackupQuery.parse("state:READY", ""), all, 7, 7);
    assertEquals(expected(all, b -> b.getState() == Backup.State.READY), ready);
    assertEquals(1250, ready.size());
    List<Backup> reversed = new ArrayList<>(all);
    java.util.Collections.reverse(reversed);
    assertEquals(seen, pageThrough(BackupQuery.parse("", ""), reversed, 7, 7), "the input's order does not count");
  }

  @Test
  void anExactlyFullLastPageHasNoNextToken() {
    ListBackupsResponse only = BackupQuery.parse("", "").page(FOUR, 4, "");
    assertEquals(4, only.getBackupsCount());
    assertEquals("", only.getNextPageToken());
    assertEquals(0, BackupQuery.parse("name:nothing", "").page(FOUR, 4, "").getBackupsCount());
  }

  @Test
  void aTokenPastTheEndOfAShrunkListGivesAnEmptyLastPage() {
    BackupQuery q = BackupQuery.parse("", "");
    String token = q.page(many(30), 20, "").getNextPageToken();
    ListBackupsResponse after = q.page(many(10), 20, token);
    assertEquals(0, after.getBackupsCount());
    assertEquals("", after.getNextPageToken());
  }

  @Test
  void aTokenContinuesOnlyTheQueryItCameFrom() {
    String token = BackupQuery.parse("name:howl", "size_bytes").page(FOUR, 1, "").getNextPageToken();
    assertFalse(token.isEmpty());
    assertEquals(1, BackupQuery.parse("NAME : HOWL", " size_bytes ASC").page(FOUR, 1, token).getBackupsCount(),
        "the same query, written otherwise");
    assertTrue(refused("page_token", () -> BackupQuery.parse("name:exact", "size_bytes").page(FOUR, 1, token))
        .contains("another filter or order_by"));
    refused("page_token", () -> BackupQuery.parse("name:howl", "size_bytes desc").page(FOUR, 1, token));
    refused("page_token", () -> BackupQuery.parse("name:howl", "").page(FOUR, 1, token));
    String byDefault = BackupQuery.parse("", "").page(FOUR, 1, "").getNextPageToken();
    assertEquals(1, BackupQuery.parse("", "start_time desc").page(FOUR, 1, byDefault).getBackupsCount());
    assertNotEquals(byDefault, token);
  }

  @Test
  void aTokenThisClassDidNotMakeIsRefused() {
    BackupQuery q = BackupQuery.parse("", "");
    String good = q.page(FOUR, 1, "").getNextPageToken();
    byte[] bytes = Base64.getUrlDecoder().decode(good);
    bytes[9] = (byte) 0x80; // a negative offset
    String negative = Base64.getUrlEncoder().withoutPadding().encodeToString(bytes);
    bytes[0] = 2;
    String otherVersion = Base64.getUrlEncoder().withoutPadding().encodeToString(bytes);
    for (String bad : List.of("x", "!!!!", "abc=def", good + "A", good.substring(1), negative, otherVersion,
        good.repeat(10), Base64.getEncoder().encodeToString(new byte[13]))) {
      assertTrue(refused("page_token", () -> q.page(FOUR, 1, bad)).contains("page_token:"), bad);
    }
  }

  private static final String[] PIECES = {"name", "source_table", "state", "start_time", "end_time", "expire_time",
      "size_bytes", "NAME", "foo", ":", "=", "!=", "<", ">", "<=", ">=", "!", "(", ")", "\"", "'", "\\", " ", " ",
      "AND", "OR", "NOT", "and", "-", "*", "howl", "READY", "creating", "10000000000", "-1", "99999999999999999999",
      "2018-03-28T14:50:00Z", "2018-03-28T14:50:00.123+01:00", "2018-02-30T00:00:00Z", "\"2018-03-28T14:50:00Z\"",
      "\u00e9", "\ud83d\ude00", "\ud800", "\t", "\n", "\0", ",", "desc", "asc"};

  private static final String[] VALID = {"name:\"exact\"", "name:howl", "source_table:prod", "state:CREATING",
      "state:READY", "(name:howl) AND (start_time < \"2018-03-28T14:50:00Z\")", "size_bytes > 10000000000",
      "NOT (name:a OR -state:READY) end_time:* expire_time >= 2018-03-28T14:50:00.5-07:00"};

  private static final String[] ORDERS = {"", "name", "start_time desc", "size_bytes desc, state",
      " end_time ASC , expire_time , source_table desc "};

  private static final String[] FIELDS = {"name", "source_table", "state", "start_time", "end_time", "expire_time",
      "size_bytes"};
  private static final String[] OPERATORS = {"<", ">", "<=", ">=", "!=", "=", ":"};
  /** Values that fit each of {@link #FIELDS}, by its index. */
  private static final String[][] VALUES = {{"howl", "\"exact\"", "'prod'", "*", "\"a \\\" b\"", "7"},
      {"prod", "'tables/staging'", "*"}, {"READY", "creating", "'Ready'", "*"},
      {"2018-03-28T14:50:00Z", "\"2018-03-28T14:50:00.5+02:00\"", "*"}, {"2018-03-30t00:00:00z", "*"},
      {"2018-04-28T14:00:00-00:30"}, {"0", "-7", "10000000000", "*", "\"5000000000\""}};

  /** A filter by the grammar, mostly well formed (one value in ten is another field's). */
  private static String grammatical(Random r, int depth) {
    return switch (depth > 3 ? 0 : r.nextInt(6)) {
      case 1 -> grammatical(r, depth + 1) + " AND " + grammatical(r, depth + 1);
      case 2 -> grammatical(r, depth + 1) + " or " + grammatical(r, depth + 1);
      case 3 -> grammatical(r, depth + 1) + " " + grammatical(r, depth + 1);
      case 4 -> (r.nextBoolean() ? "NOT " : "-") + grammatical(r, depth + 1);
      case 5 -> "(" + grammatical(r, depth + 1) + ")";
      default -> {
        int field = r.nextInt(FIELDS.length);
        String[] values = VALUES[r.nextInt(10) == 0 ? r.nextInt(VALUES.length) : field];
        yield FIELDS[field] + (r.nextBoolean() ? " " : "") + OPERATORS[r.nextInt(OPERATORS.length)]
            + values[r.nextInt(values.length)];
      }
    };
  }

  private static String randomInput(Random r) {
    StringBuilder s = new StringBuilder();
    if (r.nextBoolean()) {
      s.append(grammatical(r, 0));
    } else if (r.nextBoolean()) {
      int n = r.nextInt(12);
      for (int i = 0; i < n; i++) {
        s.append(PIECES[r.nextInt(PIECES.length)]);
      }
    } else {
      s.append(VALID[r.nextInt(VALID.length)]);
      int edits = 1 + r.nextInt(4);
      for (int i = 0; i < edits; i++) {
        int at = s.isEmpty() ? 0 : r.nextInt(s.length() + 1);
        switch (r.nextInt(3)) {
          case 0 -> s.insert(at, PIECES[r.nextInt(PIECES.length)]);
          case 1 -> {
            if (at < s.length()) {
              s.deleteCharAt(at);
            }
          }
          default -> s.insert(at, (char) r.nextInt(128));
        }
      }
    }
    return s.toString();
  }

  @Test
  void randomAndMutatedInputsEndOnlyInAnAnswerOrInvalidArgument() {
    Random r = new Random(20180328);
    int parsed = 0;
    int refused = 0;
    List<Backup> all = new ArrayList<>(FOUR);
    all.add(Backup.getDefaultInstance());
    all.add(Backup.newBuilder().setName("no-slash").setStateValue(99)
        .setStartTime(Timestamp.newBuilder().setSeconds(Long.MAX_VALUE).setNanos(-1)).build());
    for (int i = 0; i < 5000; i++) {
      String filter = randomInput(r);
      String orderBy = r.nextInt(10) == 0 ? randomInput(r) : ORDERS[r.nextInt(ORDERS.length)];
      BackupQuery q;
      try {
        q = BackupQuery.parse(filter, orderBy);
        parsed++;
      } catch (GrpcServiceException e) {
        assertEquals(Status.Code.INVALID_ARGUMENT, e.getStatus().getCode(), filter);
        refused++;
        continue;
      }
      for (Backup b : all) {
        q.matches(b);
      }
      String token = q.page(all, 2, "").getNextPageToken();
      StringBuilder mutated = new StringBuilder(token);
      if (r.nextBoolean() && !token.isEmpty()) {
        mutated.setCharAt(r.nextInt(token.length()), (char) r.nextInt(128));
      }
      try {
        q.page(all, r.nextInt(10) - 2, r.nextInt(4) == 0 ? randomInput(r) : mutated.toString());
      } catch (GrpcServiceException e) {
        assertEquals(Status.Code.INVALID_ARGUMENT, e.getStatus().getCode(), mutated.toString());
      }
    }
    assertTrue(parsed > 500 && refused > 500, parsed + " parsed, " + refused + " refused");
  }
}
