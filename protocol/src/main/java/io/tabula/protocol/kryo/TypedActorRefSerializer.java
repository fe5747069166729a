package io.tabula.protocol.kryo;

import com.esotericsoftware.kryo.Kryo;
import com.esotericsoftware.kryo.Serializer;
import com.esotericsoftware.kryo.io.Input;
import com.esotericsoftware.kryo.io.Output;
import org.apache.pekko.actor.ExtendedActorSystem;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorRefResolver;
import org.apache.pekko.actor.typed.javadsl.Adapter;

/**
 * Writes a typed {@link ActorRef} as one Kryo string, the form {@link
 * ActorRefResolver#toSerializationFormat} gives (the full path with the node's address), and
 * reads it back with {@link ActorRefResolver#resolveActorRef}.
 *
 * <p>The resolver is looked up on first use, not in the constructor: the serializer is
 * created while the actor system's serialization extension starts, before typed extensions
 * can be reached. Thread-safe; one instance is shared by all pooled Kryo instances.
 */
final class TypedActorRefSerializer extends Serializer<ActorRef<?>> {
  private final ExtendedActorSystem system;
  private volatile ActorRefResolver resolver;

  TypedActorRefSerializer(ExtendedActorSystem system) {
    super(false, true);
    this.system = system;
  }

  @Override
  public void write(Kryo kryo, Output output, ActorRef<?> ref) {
    output.writeString(resolver().toSerializationFormat(ref));
  }

  @Override
  public ActorRef<?> read(Kryo kryo, Input input, Class<? extends ActorRef<?>> type) {
    return resolver().resolveActorRef(input.readString());
  }

  private ActorRefResolver resolver() {
    ActorRefResolver current = resolver;
    if (current == null) {
      current = ActorRefResolver.get(Adapter.toTyped(system));
      resolver = current;
    }
    return current;
  }
}
