package io.tabula.protocol.kryo;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigValue;
import com.typesafe.config.ConfigValueType;
import java.util.HashMap;
import java.util.Map;

/**
 * The {@code tabula.kryo} configuration subtree, read and checked once.
 *
 * @param registrations class name to explicit Kryo id, unmodifiable and in no particular
 *     order (ids are explicit, so order does not matter); ids are distinct and at least
 *     {@link #MIN_ID}
 * @param maxMessageSize largest serialized message in bytes
 * @param retainedBufferSize a pooled output buffer that grew past this many bytes is
 *     replaced by a fresh one of this size after use, so one huge message does not pin memory
 */
record KryoSettings(
    Map<String, Integer> registrations, int maxMessageSize, int retainedBufferSize) {

  /** Where the settings live in the actor system's configuration. */
  static final String PATH = "tabula.kryo";

  /** Ids below this belong to Kryo's own primitive and String registrations (0..8 in 5.6). */
  static final int MIN_ID = 16;

  KryoSettings {
    registrations = Map.copyOf(registrations);
    if (retainedBufferSize < 256 || retainedBufferSize > maxMessageSize) {
      throw new IllegalArgumentException(
          PATH + ".retained-buffer-size must be between 256 bytes and max-message-size, was "
              + retainedBufferSize);
    }
  }

  static KryoSettings fromConfig(Config root) {
    Config config = root.getConfig(PATH);
    return new KryoSettings(
        readRegistrations(config),
        boundedSize(config, "max-message-size"),
        boundedSize(config, "retained-buffer-size"));
  }

  private static int boundedSize(Config config, String key) {
    long size = config.getBytes(key);
    if (size <= 0 || size > Integer.MAX_VALUE - 8) {
      throw new IllegalArgumentException(
          PATH + "." + key + " must be between 1 byte and 2 GiB, was " + size);
    }
    return (int) size;
  }

  private static Map<String, Integer> readRegistrations(Config config) {
    Map<String, Integer> byClass = new HashMap<>();
    Map<Integer, String> byId = new HashMap<>();
    for (Map.Entry<String, ConfigValue> entry : config.getObject("registrations").entrySet()) {
      String className = entry.getKey();
      ConfigValue value = entry.getValue();
      if (value.valueType() == ConfigValueType.NULL) {
        continue; // an application may drop a registration by setting it to null
      }
      if (value.valueType() != ConfigValueType.NUMBER
          || !(value.unwrapped() instanceof Integer id)) {
        throw new IllegalArgumentException(
            PATH + ".registrations: id of \"" + className + "\" must be an int, was "
                + value.render() + " (" + value.origin().description() + ")");
      }
      if (id < MIN_ID) {
        throw new IllegalArgumentException(
            PATH + ".registrations: id " + id + " of \"" + className + "\" is below "
                + MIN_ID + ", which is reserved for Kryo's built-in registrations");
      }
      String previous = byId.putIfAbsent(id, className);
      if (previous != null) {
        throw new IllegalArgumentException(
            PATH + ".registrations: id " + id + " is given to both \"" + previous
                + "\" and \"" + className + "\"");
      }
      byClass.put(className, id);
    }
    return byClass;
  }
}
