package io.tabula.actors;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

import io.tabula.protocol.errors.ErrorCode;
import io.tabula.protocol.errors.Refusal;
import io.tabula.protocol.errors.Refused;
import java.nio.file.Path;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.typed.javadsl.Adapter;
import org.apache.pekko.pattern.StatusReply;
import org.apache.pekko.serialization.Serialization;
import org.apache.pekko.serialization.SerializationExtension;
import org.apache.pekko.serialization.Serializer;
import org.apache.pekko.serialization.Serializers;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A refusal an actor replies with reaches an asker on another node as the same typed value: a
 * reply to an ask is a top-level {@code StatusReply}, which Pekko's own serializer writes,
 * handing the error to the error's serializer (Kryo for a {@link Refused}). Sent here through
 * the actor system's serialization exactly as remoting would.
 */
class RefusalSerializationTest {
  @TempDir
  Path dir;

  private ActorTestKit kit;

  @AfterEach
  void stop() {
    if (kit != null) {
      kit.shutdownTestKit();
    }
  }

  @Test
  void aRefusalCrossesNodesTyped() {
    kit = ActorTestKit.create(ActorTestConfig.withJournalIn(dir));
    Serialization serialization = SerializationExtension.get(Adapter.toClassic(kit.system()));
    StatusReply<Object> reply = Refusal.of(ErrorCode.MOVED, "tablet t-1 has split").reply();
    Serializer outer = serialization.findSerializerFor(reply);
    byte[] bytes = serialization.serialize(reply).get();
    StatusReply<?> back = (StatusReply<?>) serialization.deserialize(bytes, outer.identifier(),
        Serializers.manifestFor(outer, reply)).get();
    Refused refused = assertInstanceOf(Refused.class, back.getError());
    assertEquals(new Refusal(ErrorCode.MOVED, "tablet t-1 has split"), refused.refusal());
  }
}
