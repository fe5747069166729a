package io.tabula.multijvm;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** The history checker accepts linearizable register histories and rejects the rest, each for its reason. */
class RegisterHistoryTest {
  private static final long NEVER = RegisterHistory.NEVER;

  private static String rejected(RegisterHistory h) {
    return assertThrows(AssertionError.class, h::check).getMessage();
  }

  @Test
  void sequentialWritesAndReadsOfTheLatestValueAreLinearizable() {
    RegisterHistory h = new RegisterHistory();
    h.read("r", null, 0, 1);
    h.write("r", "a", 2, 3);
    h.read("r", "a", 4, 5);
    h.write("r", "b", 6, 7);
    h.read("r", "b", 8, 9);
    assertTrue(h.check().contains("1 rows: 2 acknowledged writes"));
  }

  @Test
  void concurrentWritesMayTakeEffectInEitherOrder() {
    RegisterHistory h = new RegisterHistory();
    h.write("r", "a", 0, 10);
    h.write("r", "b", 1, 9);
    h.read("r", "a", 11, 12);
    h.read("r", "a", 13, 14);
    h.check();
    RegisterHistory other = new RegisterHistory();
    other.write("r", "a", 0, 10);
    other.write("r", "b", 1, 9);
    other.read("r", "b", 11, 12);
    other.check();
  }

  @Test
  void aReadDuringAWriteMaySeeTheOldOrTheNewValue() {
    RegisterHistory h = new RegisterHistory();
    h.write("r", "a", 0, 1);
    h.write("r", "b", 2, 10);
    h.read("r", "a", 3, 4);
    h.read("r", "b", 5, 6);
    h.read("r", "b", 11, 12);
    h.check();
  }

  @Test
  void aStaleReadIsRejected() {
    RegisterHistory h = new RegisterHistory();
    h.write("r", "a", 0, 1);
    h.write("r", "b", 2, 3);
    h.read("r", "a", 4, 5); // b was acknowledged before this read began
    assertTrue(rejected(h).contains("not linearizable"));
  }

  @Test
  void readingTheNewValueThenTheOldIsRejected() {
    RegisterHistory h = new RegisterHistory();
    h.write("r", "a", 0, 1);
    h.write("r", "b", 2, 20); // still under way
    h.read("r", "b", 3, 4);
    h.read("r", "a", 5, 6); // after a read saw b, a may not come back
    assertTrue(rejected(h).contains("not linearizable"));
  }

  @Test
  void aLostAcknowledgedWriteIsRejectedByTheFinalRead() {
    RegisterHistory h = new RegisterHistory();
    h.write("r", "a", 0, 1);
    h.write("r", "b", 2, 3);
    h.read("r", "a", 100, 101); // the final read after the load: b is gone
    assertTrue(rejected(h).contains("lost write, or a stale read"));
  }

  @Test
  void anEmptyReadAfterAnAcknowledgedWriteIsRejected() {
    RegisterHistory h = new RegisterHistory();
    h.write("r", "a", 0, 1);
    h.read("r", null, 2, 3);
    assertTrue(rejected(h).contains("not linearizable"));
  }

  @Test
  void aValueNoWriteWroteIsRejected() {
    RegisterHistory h = new RegisterHistory();
    h.write("r", "a", 0, 1);
    h.read("r", "x", 2, 3);
    assertTrue(rejected(h).contains("which no write wrote"));
  }

  @Test
  void aReadThatAnsweredBeforeItsWriteBeganIsRejected() {
    RegisterHistory h = new RegisterHistory();
    h.read("r", "a", 0, 1);
    h.write("r", "a", 2, 3);
    assertTrue(rejected(h).contains("before its write began"));
  }

  @Test
  void aWriteOfUnknownOutcomeMayHaveTakenEffectLateOrNotAtAll() {
    RegisterHistory late = new RegisterHistory();
    late.write("r", "a", 0, 1);
    late.write("r", "b", 2, NEVER); // failed for its client, applied later
    late.read("r", "a", 3, 4);
    late.read("r", "b", 50, 51);
    late.check();
    RegisterHistory never = new RegisterHistory();
    never.write("r", "a", 0, 1);
    never.write("r", "b", 2, NEVER); // failed, never applied
    never.read("r", "a", 50, 51);
    never.check();
  }

  @Test
  void rowsAreCheckedApart() {
    RegisterHistory h = new RegisterHistory();
    h.write("r1", "a", 0, 1);
    h.write("r2", "b", 2, 3);
    h.read("r1", "a", 4, 5);
    h.read("r2", "b", 4, 5);
    h.check();
    h.read("r2", null, 6, 7);
    assertTrue(rejected(h).contains("row r2"));
  }

  @Test
  void aLostWriteInsideALaterValuesSpanIsFoundAmongManyValues() {
    RegisterHistory h = new RegisterHistory();
    h.write("r", "a", 0, 1);
    h.read("r", "a", 2, 3);
    h.write("r", "b", 4, 5);
    h.read("r", "b", 6, 7);
    h.write("r", "c", 8, 9);
    h.write("r", "d", 12, 13); // acknowledged, then lost: c is read after it
    h.read("r", "c", 20, 21);
    assertTrue(rejected(h).contains("value d was written and read within"));
  }

  @Test
  void violationsNameEachBadRowAndItsHistoryShowsTheClientsWithRepeatedReadsFolded() {
    RegisterHistory h = new RegisterHistory();
    h.write("r1", "a", 0, 1, "n1#1");
    h.write("r1", "b", 2, 3, "n2#1");
    h.read("r1", "a", 4, 5, "n3#1"); // stale, twice
    h.read("r1", "a", 6, 7, "n3#1");
    h.write("r2", "c", 0, 1, "n1#1");
    h.read("r2", "c", 2, 3, "n4#1");
    java.util.List<RegisterHistory.Violation> found = h.violations(t -> "+" + t);
    org.junit.jupiter.api.Assertions.assertEquals(1, found.size());
    org.junit.jupiter.api.Assertions.assertEquals("r1", found.get(0).row);
    assertTrue(found.get(0).getMessage().contains("via n2#1"), found.get(0).getMessage());
    String shown = h.rowHistory("r1", 0, 10, t -> "+" + t);
    assertTrue(shown.contains("write value b invoked +2 answered +3 via n2#1"), shown);
    assertTrue(shown.contains("read  value a x2 via n3#1: the first invoked +4 answered +5, the last invoked +6 "
        + "answered +7"), shown);
  }
}
