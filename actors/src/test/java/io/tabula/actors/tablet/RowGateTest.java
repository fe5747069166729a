package io.tabula.actors.tablet;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class RowGateTest {
  private final RowGate gate = new RowGate();
  private final List<String> ran = new ArrayList<>();

  private static byte[] b(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  private void write(String row, String name) {
    gate.write(b(row), () -> ran.add(name));
  }

  private void exclusive(String row, String name) {
    gate.exclusive(b(row), () -> ran.add(name));
  }

  @Test
  void writesToOneRowRunSideBySide() {
    write("r", "w1");
    write("r", "w2");
    assertEquals(List.of("w1", "w2"), ran, "a write does not wait for an earlier write to its row");
  }

  @Test
  void anExclusiveRequestWaitsForEveryWriteToItsRowAndRunsInOrder() {
    write("r", "w1");
    write("r", "w2");
    exclusive("r", "x1");
    exclusive("r", "x2");
    exclusive("other", "elsewhere");
    assertEquals(List.of("w1", "w2", "elsewhere"), ran, "another row does not wait");
    gate.writeFinished(b("r"));
    assertEquals(List.of("w1", "w2", "elsewhere"), ran, "one write to the row is still in flight");
    gate.writeFinished(b("r"));
    assertEquals(List.of("w1", "w2", "elsewhere", "x1"), ran, "one exclusive request at a time");
    gate.exclusiveDone(b("r"));
    assertEquals(List.of("w1", "w2", "elsewhere", "x1", "x2"), ran);
  }

  @Test
  void nothingComesBetweenAnExclusiveRequestsReadAndItsWrite() {
    exclusive("r", "cas");
    write("r", "plain write");
    exclusive("r", "second cas");
    assertEquals(List.of("cas"), ran, "a write waits while the row is held");
    gate.exclusiveWrote(b("r"));
    assertEquals(List.of("cas", "plain write"), ran,
        "once the exclusive write is applied, later writes follow it (the engine orders them)");
    gate.writeFinished(b("r"));
    assertEquals(List.of("cas", "plain write"), ran, "the plain write is still in flight");
    gate.writeFinished(b("r"));
    assertEquals(List.of("cas", "plain write", "second cas"), ran);
    gate.exclusiveDone(b("r"));
    assertTrue(gate.isEmpty(), "every row forgotten once idle");
  }

  @Test
  void aWriteQueuedBehindAnExclusiveRequestDoesNotOvertakeIt() {
    write("r", "w1");
    exclusive("r", "x");
    write("r", "w2");
    assertEquals(List.of("w1"), ran, "w2 arrived after x and waits behind it");
    gate.writeFinished(b("r"));
    gate.exclusiveDone(b("r"));
    assertEquals(List.of("w1", "x", "w2"), ran);
  }

  @Test
  void aRangeHoldWaitsForItsRowsAndHoldsThem() {
    write("a1", "before");
    RowGate.RangeHold[] hold = new RowGate.RangeHold[1];
    gate.holdRange(b("a"), b("b"), h -> {
      hold[0] = h;
      ran.add("drop");
    });
    assertEquals(List.of("before"), ran, "the drop waits for the write in flight in its range");
    write("a2", "during");
    exclusive("a1", "cas");
    write("b1", "outside");
    assertEquals(List.of("before", "outside"), ran, "rows outside the range go on");
    gate.writeFinished(b("a1"));
    assertEquals(List.of("before", "outside", "drop"), ran);
    gate.release(hold[0]);
    assertEquals(List.of("before", "outside", "drop"), ran.subList(0, 3));
    assertEquals(java.util.Set.of("during", "cas"), java.util.Set.copyOf(ran.subList(3, ran.size())),
        "both rows go on once the hold is released (rows apart keep no order between them)");
  }

  @Test
  void workThatFinishesWhileItRunsDoesNotRecurse() {
    // A write that fails at once reports itself finished from inside its own run.
    exclusive("r", "x");
    gate.write(b("r"), () -> {
      ran.add("w fails at once");
      gate.writeFinished(b("r"));
    });
    exclusive("r", "y");
    gate.exclusiveDone(b("r"));
    assertEquals(List.of("x", "w fails at once", "y"), ran);
  }

  @Test
  void waitingWorkIsHandedOutWhenTheTabletCloses() {
    exclusive("r", "x");
    write("r", "w");
    gate.holdRange(b(""), b(""), h -> ran.add("drop"));
    List<Runnable> waiting = gate.takeAllWaiting();
    assertEquals(2, waiting.size());
    waiting.forEach(Runnable::run);
    assertEquals(List.of("x", "w", "drop"), ran);
    assertTrue(gate.isEmpty());
  }
}
