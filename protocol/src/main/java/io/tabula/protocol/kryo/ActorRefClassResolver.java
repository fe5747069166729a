package io.tabula.protocol.kryo;

import com.esotericsoftware.kryo.Registration;
import com.esotericsoftware.kryo.util.DefaultClassResolver;
import org.apache.pekko.actor.typed.ActorRef;

/**
 * Resolves every implementation of the typed {@link ActorRef} interface (adapters, the
 * system itself, whatever Pekko adds later) to the one registration of the interface.
 *
 * <p>The concrete classes are Pekko internals that vary between local, remote and temporary
 * (ask) references; registering each would break whenever Pekko adds one. Written refs are
 * read back through {@code ActorRefResolver}, which picks the right runtime class itself.
 * Unchanged for every other type: an unregistered class stays unregistered.
 */
final class ActorRefClassResolver extends DefaultClassResolver {
  @Override
  @SuppressWarnings("rawtypes") // Kryo's signature
  public Registration getRegistration(Class type) {
    Registration registration = super.getRegistration(type);
    if (registration == null && type != null && ActorRef.class.isAssignableFrom(type)) {
      return super.getRegistration(ActorRef.class);
    }
    return registration;
  }
}
