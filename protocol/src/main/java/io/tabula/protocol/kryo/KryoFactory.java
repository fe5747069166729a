package io.tabula.protocol.kryo;

import com.esotericsoftware.kryo.Kryo;
import com.esotericsoftware.kryo.serializers.DefaultSerializers;
import com.esotericsoftware.kryo.serializers.EnumNameSerializer;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.UUID;
import org.apache.pekko.Done;
import org.apache.pekko.actor.typed.ActorRef;
import io.tabula.protocol.errors.Refused;
import org.apache.pekko.pattern.StatusReply;

/**
 * Builds identically configured {@link Kryo} instances, one per pooled slot.
 *
 * <p>Every instance gets the same rules, in this order of precedence:
 *
 * <ol>
 *   <li>registration is required: a class without an explicit id cannot be written or read;
 *   <li>ids come from {@link KryoSettings#registrations()}, never from registration order;
 *   <li>enums are written by constant name ({@link EnumNameSerializer}), never by ordinal;
 *   <li>any typed {@link ActorRef} implementation is written under the id registered for
 *       {@code org.apache.pekko.actor.typed.ActorRef} as its serialization-format string
 *       ({@link TypedActorRefSerializer});
 *   <li>{@link StatusReply}, {@link Refused} and {@link Done} have their own serializers, {@link UUID} uses
 *       Kryo's; records, JDK immutable collections, {@code Optional} and {@code java.time}
 *       use the serializers Kryo 5 picks for them by default. Any other registered class gets
 *       Kryo's field serializer, which on Java 17 cannot open JDK internals: registering such
 *       a JDK class fails when the serializer is created, not later;
 *   <li>references are off: object graphs must be trees (no cycles, shared objects are
 *       written twice).
 * </ol>
 *
 * <p>Thread safety: {@link #create()} may be called from any thread; each {@link Kryo} it
 * returns must be used by one thread at a time. The serializers it shares between instances
 * are stateless or thread-safe.
 */
final class KryoFactory {
  private final ClassLoader classLoader;
  private final TypedActorRefSerializer actorRefSerializer;
  private final Map<Class<?>, Integer> registrations;

  /**
   * Loads every registered class once, so a typo in configuration fails when the serializer
   * is created (at actor system start), not on the first message.
   */
  KryoFactory(
      KryoSettings settings, ClassLoader classLoader, TypedActorRefSerializer actorRefSerializer) {
    this.classLoader = classLoader;
    this.actorRefSerializer = actorRefSerializer;
    this.registrations = loadClasses(settings, classLoader);
  }

  Kryo create() {
    Kryo kryo = new Kryo(new ActorRefClassResolver(), null) {
      @Override
      @SuppressWarnings("rawtypes") // Kryo's signature
      protected String unregisteredClassMessage(Class type) {
        return "Class is not registered for Kryo: " + type.getName() + ". Add \""
            + type.getName() + "\" = <unused id> to " + KryoSettings.PATH
            + ".registrations (the protocol module's reference.conf says which file holds"
            + " which range of ids).";
      }
    };
    kryo.setRegistrationRequired(true);
    kryo.setReferences(false);
    kryo.setClassLoader(classLoader);
    kryo.addDefaultSerializer(Enum.class, EnumNameSerializer.class);
    kryo.addDefaultSerializer(ActorRef.class, actorRefSerializer);
    kryo.addDefaultSerializer(StatusReply.class, new StatusReplySerializer());
    kryo.addDefaultSerializer(Refused.class, new RefusedSerializer());
    kryo.addDefaultSerializer(Done.class, new DoneSerializer());
    kryo.addDefaultSerializer(UUID.class, new DefaultSerializers.UUIDSerializer());
    registrations.forEach(kryo::register);
    return kryo;
  }

  /**
   * Loads the classes in id order, the one order imposed anywhere: it makes the first missing
   * class reported, and the order of {@link Kryo#register} calls, the same on every start.
   */
  private static Map<Class<?>, Integer> loadClasses(KryoSettings settings, ClassLoader loader) {
    Map<Class<?>, Integer> loaded = new LinkedHashMap<>();
    settings.registrations().entrySet().stream()
        .sorted(Map.Entry.comparingByValue())
        .forEach(entry -> {
          int id = entry.getValue();
          loaded.put(load(entry.getKey(), id, loader), id);
        });
    return loaded;
  }

  private static Class<?> load(String className, int id, ClassLoader loader) {
    try {
      return Class.forName(className, false, loader);
    } catch (ClassNotFoundException e) {
      throw new IllegalArgumentException(
          KryoSettings.PATH + ".registrations: class \"" + className + "\" (id " + id
              + ") is not on the classpath", e);
    }
  }
}
