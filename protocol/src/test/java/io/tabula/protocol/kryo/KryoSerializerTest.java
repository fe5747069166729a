package io.tabula.protocol.kryo;

import static java.nio.charset.StandardCharsets.ISO_8859_1;
import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.esotericsoftware.kryo.KryoException;
import com.typesafe.config.ConfigFactory;
import io.tabula.protocol.errors.ErrorCode;
import io.tabula.protocol.errors.Refusal;
import io.tabula.protocol.errors.Refused;
import io.tabula.protocol.kryo.TestMessages.Cell;
import io.tabula.protocol.kryo.TestMessages.Color;
import io.tabula.protocol.kryo.TestMessages.Holder;
import io.tabula.protocol.kryo.TestMessages.Ping;
import io.tabula.protocol.kryo.TestMessages.Pong;
import io.tabula.protocol.kryo.TestMessages.Row;
import io.tabula.protocol.kryo.TestMessages.Unregistered;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.UUID;
import org.apache.pekko.Done;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.javadsl.Adapter;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.pattern.StatusReply;
import org.apache.pekko.serialization.Serialization;
import org.apache.pekko.serialization.SerializationExtension;
import org.apache.pekko.serialization.Serializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

/** Actor tier: one running actor system with {@code serialize-messages = on}. */
class KryoSerializerTest {
  private static final ActorTestKit testKit = ActorTestKit.create(ConfigFactory.load("kryo-test"));
  private static final Serialization serialization =
      SerializationExtension.get(Adapter.toClassic(testKit.system()));

  @AfterAll
  static void stop() {
    testKit.shutdownTestKit();
  }

  private static KryoSerializer kryo() {
    Serializer serializer = serialization.findSerializerFor(new Pong(""));
    return assertInstanceOf(KryoSerializer.class, serializer);
  }

  @SuppressWarnings("unchecked")
  private static <T> T roundTrip(T message) {
    byte[] bytes = kryo().toBinary(message);
    return (T) kryo().fromBinary(bytes);
  }

  @Test
  void markerInterfaceIsBoundToKryoWithoutManifest() {
    Serializer serializer = serialization.findSerializerFor(new Pong("x"));
    assertInstanceOf(KryoSerializer.class, serializer);
    assertEquals(KryoSerializer.IDENTIFIER, serializer.identifier());
    assertEquals(false, serializer.includeManifest());
  }

  @Test
  void nestedRecordWithBytesListsOptionalAndEnumRoundTrips() {
    Row row =
        new Row(
            "row-1",
            List.of(new Cell("v1".getBytes(UTF_8), 7), new Cell(new byte[0], -1)),
            Optional.of("note"),
            Color.BLUE);
    assertEquals(row, roundTrip(row));

    Row sparse = new Row("", new ArrayList<>(), Optional.empty(), Color.RED);
    assertEquals(sparse, roundTrip(sparse));
  }

  @Test
  void largeValueRoundTripsAndTheSerializerKeepsWorking() {
    byte[] value = new byte[20 << 20];
    for (int i = 0; i < value.length; i++) {
      value[i] = (byte) (i * 31);
    }
    Holder big = new Holder(new Cell(value, 1));
    Cell back = (Cell) roundTrip(big).content();
    assertArrayEquals(value, back.value());
    assertEquals(new Pong("after"), roundTrip(new Pong("after")));
  }

  @Test
  void bytesMatchTheWorkedExampleInTheFormatDoc() {
    // docs/formats/kryo-messages.md: Pong is registered as 9004, so its class id is 9006.
    assertArrayEquals(
        new byte[] {(byte) 0xae, 0x46, 0x6f, (byte) 0xeb}, kryo().toBinary(new Pong("ok")));
  }

  @Test
  void enumsTravelByNameNotOrdinal() {
    byte[] bytes = kryo().toBinary(new Holder(Color.GREEN));
    // Kryo marks the end of an ASCII string by setting the top bit of its last byte.
    assertTrue(new String(bytes, ISO_8859_1).contains("GREE"), "enum written by name");
    assertEquals(Color.GREEN, ((Holder) kryo().fromBinary(bytes)).content());
  }

  @Test
  void jdkImmutableCollectionsComeBackEqualAndImmutable() {
    List<Object> samples =
        List.of(
            List.of(), List.of(1), List.of(1, 2, 3), Set.of("a"), Set.of("a", "b", "c"),
            Map.of("k", 1L), Map.of("a", 1, "b", 2, "c", 3), List.of(5, 6, 7).stream().toList());
    for (Object sample : samples) {
      Object back = roundTrip(new Holder(sample)).content();
      assertEquals(sample, back);
      assertSame(sample.getClass(), back.getClass());
    }
    List<?> list = (List<?>) roundTrip(new Holder(List.of(1, 2))).content();
    assertThrows(UnsupportedOperationException.class, () -> list.remove(0));
  }

  @Test
  void everyBaseRegistrationRoundTrips() {
    Map<String, Integer> linked = new LinkedHashMap<>();
    linked.put("z", 1);
    linked.put("a", 2);
    List<Object> samples =
        List.of(
            new byte[] {1, 2, 3}, new String[] {"a", "b"}, new long[] {1L, 2L}, new int[] {3},
            new ArrayList<>(List.of("x")), Collections.emptyList(), Collections.singletonList(9),
            new HashSet<>(Set.of(1, 2)), new TreeSet<>(Set.of("b", "a")),
            new HashMap<>(Map.of("k", "v")), new TreeMap<>(Map.of("b", 2, "a", 1)), linked,
            Collections.emptyMap(), Optional.of(4), Optional.empty(), OptionalLong.of(3),
            Duration.ofMillis(1500), Instant.ofEpochSecond(1_700_000_000L, 5),
            new UUID(1, 2), Done.getInstance());
    for (Object sample : samples) {
      Object back = roundTrip(new Holder(sample)).content();
      if (sample instanceof byte[] bytes) {
        assertArrayEquals(bytes, (byte[]) back);
      } else if (sample instanceof String[] strings) {
        assertArrayEquals(strings, (String[]) back);
      } else if (sample instanceof long[] longs) {
        assertArrayEquals(longs, (long[]) back);
      } else if (sample instanceof int[] ints) {
        assertArrayEquals(ints, (int[]) back);
      } else {
        assertEquals(sample, back, sample.getClass().getName());
        assertSame(sample.getClass(), back.getClass(), sample.getClass().getName());
      }
    }
    Map<?, ?> linkedBack = (Map<?, ?>) roundTrip(new Holder(linked)).content();
    assertEquals(List.of("z", "a"), List.copyOf(linkedBack.keySet()), "insertion order kept");
  }

  @Test
  void unregisteredClassFailsNamingTheClassAndTheConfigKey() {
    // Kryo throws IllegalArgumentException at the top level and wraps it in a KryoException
    // (with the field path) when the class is nested; both carry the message.
    RuntimeException top =
        assertThrows(RuntimeException.class, () -> kryo().toBinary(new Unregistered(1)));
    assertTrue(top.getMessage().contains(Unregistered.class.getName()), top.getMessage());
    assertTrue(top.getMessage().contains("tabula.kryo.registrations"), top.getMessage());

    KryoException nested =
        assertThrows(KryoException.class, () -> kryo().toBinary(new Holder(new Unregistered(2))));
    assertTrue(nested.getMessage().contains(Unregistered.class.getName()), nested.getMessage());
    assertTrue(nested.getMessage().contains("tabula.kryo.registrations"), nested.getMessage());
    assertEquals(new Pong("still usable"), roundTrip(new Pong("still usable")));
  }

  @Test
  void arteryBuffersCarryTheSameBytesFromAndToTheirPositions() {
    Row row = new Row("row-1", List.of(new Cell(new byte[3000], 7)), Optional.of("note"), Color.BLUE);
    byte[] bytes = kryo().toBinary(row);
    // As Artery's frames: a direct buffer, the envelope's header before the message.
    java.nio.ByteBuffer frame = java.nio.ByteBuffer.allocateDirect(8192);
    frame.position(100);
    kryo().toBinary(row, frame);
    assertEquals(100 + bytes.length, frame.position());
    byte[] written = new byte[bytes.length];
    frame.flip().position(100);
    frame.duplicate().get(written);
    assertArrayEquals(bytes, written);
    assertEquals(row, kryo().fromBinary(frame, ""));
    assertEquals(frame.limit(), frame.position());

    java.nio.ByteBuffer tooSmall = java.nio.ByteBuffer.allocateDirect(bytes.length - 1);
    assertThrows(java.nio.BufferOverflowException.class, () -> kryo().toBinary(row, tooSmall));
    assertEquals(0, tooSmall.position());

    java.nio.ByteBuffer trailing = java.nio.ByteBuffer.allocate(bytes.length + 1).put(bytes).put((byte) 0).flip();
    KryoException e = assertThrows(KryoException.class, () -> kryo().fromBinary(trailing, ""));
    assertTrue(e.getMessage().contains("trailing"), e.getMessage());
  }

  @Test
  void trailingBytesAreReported() {
    byte[] bytes = kryo().toBinary(new Pong("p"));
    byte[] longer = Arrays.copyOf(bytes, bytes.length + 1);
    KryoException e = assertThrows(KryoException.class, () -> kryo().fromBinary(longer));
    assertTrue(e.getMessage().contains("trailing"), e.getMessage());
  }

  @Test
  void statusRepliesRoundTrip() {
    StatusReply<?> ok = roundTrip(StatusReply.success(new Pong("ok")));
    assertEquals(new Pong("ok"), ok.getValue());

    StatusReply<?> ack = roundTrip(StatusReply.ack());
    assertSame(Done.getInstance(), ack.getValue());

    StatusReply<?> error = roundTrip(StatusReply.error("no such table"));
    assertInstanceOf(StatusReply.ErrorMessage.class, error.getError());
    assertEquals("no such table", error.getError().getMessage());

    StatusReply<?> exception = roundTrip(StatusReply.error(new IllegalStateException("closed")));
    assertEquals("java.lang.IllegalStateException: closed", exception.getError().getMessage());

    StatusReply<?> refused = roundTrip(Refusal.of(ErrorCode.MOVED, "tablet t-1 has split").reply());
    Refused back = assertInstanceOf(Refused.class, refused.getError());
    assertEquals(new Refusal(ErrorCode.MOVED, "tablet t-1 has split"), back.refusal());
  }

  @Test
  void actorRefRoundTripsAndStillReachesItsActor() {
    TestProbe<Pong> probe = testKit.createTestProbe();
    Ping back = roundTrip(new Ping("hello", probe.getRef()));
    assertEquals(probe.getRef(), back.replyTo());
    back.replyTo().tell(new Pong("via deserialized ref"));
    probe.expectMessage(new Pong("via deserialized ref"));
  }

  @Test
  void registeredMessagesTravelBetweenActorsWithSerializeMessagesOn() {
    assertTrue(
        testKit.system().settings().config().getBoolean("pekko.actor.serialize-messages"));
    ActorRef<Ping> echo =
        testKit.spawn(
            Behaviors.receiveMessage(
                ping -> {
                  ping.replyTo().tell(new Pong(ping.text() + "!"));
                  return Behaviors.same();
                }));
    TestProbe<Pong> probe = testKit.createTestProbe();
    echo.tell(new Ping("ping", probe.getRef()));
    probe.expectMessage(new Pong("ping!"));

    // The same send with a class missing from the registrations never arrives: Pekko
    // serializes it on the way and drops it with an error log.
    TestProbe<Holder> holders = testKit.createTestProbe();
    holders.getRef().tell(new Holder(new Unregistered(3)));
    holders.getRef().tell(new Holder("registered"));
    holders.expectMessage(new Holder("registered"));
  }
}
