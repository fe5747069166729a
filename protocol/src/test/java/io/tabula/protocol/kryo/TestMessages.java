package io.tabula.protocol.kryo;

import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import org.apache.pekko.actor.typed.ActorRef;

/** Messages the serializer tests send; registered in {@code kryo-test.conf}. */
final class TestMessages {
  private TestMessages() {}

  enum Color {
    RED,
    GREEN,
    BLUE
  }

  /** byte[] has identity equality, so this record compares its value by content. */
  record Cell(byte[] value, long timestamp) {
    @Override
    public boolean equals(Object other) {
      return other instanceof Cell cell
          && Arrays.equals(value, cell.value)
          && timestamp == cell.timestamp;
    }

    @Override
    public int hashCode() {
      return 31 * Arrays.hashCode(value) + Long.hashCode(timestamp);
    }
  }

  record Row(String key, List<Cell> cells, Optional<String> note, Color color)
      implements KryoSerializable {}

  record Ping(String text, ActorRef<Pong> replyTo) implements KryoSerializable {}

  record Pong(String text) implements KryoSerializable {}

  /** Carries any object, to check types nested inside a registered message. */
  record Holder(Object content) implements KryoSerializable {}

  /** Deliberately absent from the registrations. */
  record Unregistered(int n) implements KryoSerializable {}
}
