package io.tabula.actors.tablet;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class RowGateTest {
  private static byte[] b(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  @Test
  void requestsWaitForEveryWriteToTheirRowAndRunInOrder() {
    RowGate<String> gate = new RowGate<>();
    List<String> ran = new ArrayList<>();
    assertFalse(gate.mustWait(b("r"), "free"), "no write in flight: run at once");
    gate.writeStarted(b("r"));
    gate.writeStarted(b("r"));
    assertTrue(gate.mustWait(b("r"), "first"));
    assertTrue(gate.mustWait(b("r"), "second"));
    assertFalse(gate.mustWait(b("other"), "elsewhere"), "another row does not wait");
    gate.writeFinished(b("r"), ran::add);
    assertEquals(List.of(), ran, "one write to the row is still in flight");
    gate.writeFinished(b("r"), ran::add);
    assertEquals(List.of("first", "second"), ran);
  }

  @Test
  void aRequestThatWritesHoldsBackTheOnesAfterIt() {
    RowGate<String> gate = new RowGate<>();
    List<String> ran = new ArrayList<>();
    gate.writeStarted(b("r"));
    gate.mustWait(b("r"), "writes");
    gate.mustWait(b("r"), "after");
    gate.writeFinished(b("r"), c -> {
      ran.add(c);
      gate.writeStarted(b("r"));
    });
    assertEquals(List.of("writes"), ran);
    gate.writeFinished(b("r"), ran::add);
    assertEquals(List.of("writes", "after"), ran);
  }
}
