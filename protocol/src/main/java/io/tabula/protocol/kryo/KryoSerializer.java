package io.tabula.protocol.kryo;

import com.esotericsoftware.kryo.Kryo;
import com.esotericsoftware.kryo.KryoException;
import com.esotericsoftware.kryo.io.Input;
import com.esotericsoftware.kryo.io.Output;
import com.esotericsoftware.kryo.util.Pool;
import org.apache.pekko.actor.ExtendedActorSystem;
import org.apache.pekko.serialization.JSerializer;

/**
 * Pekko serializer for Tabula's internal messages ({@link KryoSerializable}), over Kryo 5
 * with explicit class registration.
 *
 * <p>Bound in this module's {@code reference.conf} as {@code tabula-kryo}. Each module lists
 * its message classes with fixed ids under {@code tabula.kryo.registrations}; see {@link
 * KryoFactory} for the rules every Kryo instance follows and {@code
 * docs/formats/kryo-messages.md} for the bytes.
 *
 * <p>Bytes: the message's registration id as a Kryo varint (id + 2), then its fields as
 * Kryo writes them for its serializer (records: components in declaration order; enums: the
 * constant name; typed actor refs: their serialization-format string). No manifest and no
 * class names travel. Nothing follows the message: trailing bytes are reported as an error.
 *
 * <p>Not a stable storage format: a record's bytes change when its components change, so
 * these bytes are for messages between nodes of the same build, never for disk.
 *
 * <p>Thread safety: Kryo instances are not thread-safe, so each call borrows one (with its
 * output buffer) from a {@link Pool} and returns it afterwards; the serializer itself may be
 * used from any number of threads.
 */
public final class KryoSerializer extends JSerializer {

  /**
   * Pekko's id for this serializer, sent with every message: {@code 0x54424B31}, the ASCII
   * bytes {@code "TBK1"} (Tabula Kryo, version 1). Pekko reserves 0 to 40; never change it
   * once nodes have exchanged messages.
   */
  public static final int IDENTIFIER = 0x54424B31;

  private final Pool<Codec> pool;

  /** Called reflectively by Pekko's serialization extension, once per actor system. */
  public KryoSerializer(ExtendedActorSystem system) {
    KryoSettings settings = KryoSettings.fromConfig(system.settings().config());
    KryoFactory factory =
        new KryoFactory(
            settings, system.dynamicAccess().classLoader(), new TypedActorRefSerializer(system));
    Codec first = new Codec(factory.create(), settings);
    this.pool =
        new Pool<>(true, false, 2 * Runtime.getRuntime().availableProcessors()) {
          @Override
          protected Codec create() {
            return new Codec(factory.create(), settings);
          }
        };
    pool.free(first);
  }

  @Override
  public int identifier() {
    return IDENTIFIER;
  }

  @Override
  public boolean includeManifest() {
    return false;
  }

  @Override
  public byte[] toBinary(Object message) {
    Codec codec = pool.obtain();
    try {
      return codec.write(message);
    } finally {
      pool.free(codec);
    }
  }

  @Override
  public Object fromBinaryJava(byte[] bytes, Class<?> manifest) {
    Codec codec = pool.obtain();
    try {
      return codec.read(bytes);
    } finally {
      pool.free(codec);
    }
  }

  /** One Kryo and its growable output buffer; used by one thread at a time. */
  private static final class Codec {
    private final Kryo kryo;
    private final KryoSettings settings;
    private Output output;

    Codec(Kryo kryo, KryoSettings settings) {
      this.kryo = kryo;
      this.settings = settings;
      this.output = newOutput();
    }

    byte[] write(Object message) {
      try {
        output.reset();
        kryo.writeClassAndObject(output, message);
        return output.toBytes();
      } finally {
        if (output.getBuffer().length > settings.retainedBufferSize()) {
          output = newOutput();
        }
      }
    }

    Object read(byte[] bytes) {
      Input input = new Input(bytes);
      Object message = kryo.readClassAndObject(input);
      if (input.position() != bytes.length) {
        throw new KryoException(
            "message of " + bytes.length + " bytes has " + (bytes.length - input.position())
                + " trailing bytes after "
                + (message == null ? "null" : message.getClass().getName()));
      }
      return message;
    }

    private Output newOutput() {
      return new Output(Math.min(4096, settings.retainedBufferSize()), settings.maxMessageSize());
    }
  }
}
