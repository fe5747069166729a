package io.tabula.protocol.kryo;

import com.esotericsoftware.kryo.Kryo;
import com.esotericsoftware.kryo.KryoException;
import com.esotericsoftware.kryo.io.ByteBufferInput;
import com.esotericsoftware.kryo.io.Input;
import com.esotericsoftware.kryo.io.Output;
import com.esotericsoftware.kryo.util.Pool;
import java.nio.ByteBuffer;
import java.util.function.Function;
import org.apache.pekko.actor.ExtendedActorSystem;
import org.apache.pekko.serialization.ByteBufferSerializer;
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
 *
 * <p>Between nodes, Artery hands it its own buffers ({@link ByteBufferSerializer}): a message
 * is read straight from the received frame and written from the pooled output into the
 * frame, saving a copy of every message's bytes each way. The bytes are the same as
 * {@link #toBinary(Object)}'s.
 */
public final class KryoSerializer extends JSerializer implements ByteBufferSerializer {

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
    return withCodec(codec -> codec.write(message));
  }

  @Override
  public Object fromBinaryJava(byte[] bytes, Class<?> manifest) {
    return withCodec(codec -> codec.read(bytes));
  }

  @Override
  public void toBinary(Object message, ByteBuffer buffer) {
    withCodec(codec -> {
      codec.write(message, buffer);
      return null;
    });
  }

  @Override
  public Object fromBinary(ByteBuffer buffer, String manifest) {
    return withCodec(codec -> codec.read(buffer));
  }

  /** {@code use} of a codec borrowed from the pool for the call. */
  private <T> T withCodec(Function<Codec, T> use) {
    Codec codec = pool.obtain();
    try {
      return use.apply(codec);
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
        shrink();
      }
    }

    /**
     * Writes {@code message} into {@code buffer} from its position; BufferOverflowException
     * (nothing written) when it does not fit what remains.
     */
    void write(Object message, ByteBuffer buffer) {
      try {
        output.reset();
        kryo.writeClassAndObject(output, message);
        buffer.put(output.getBuffer(), 0, output.position());
      } finally {
        shrink();
      }
    }

    private void shrink() {
      if (output.getBuffer().length > settings.retainedBufferSize()) {
        output = newOutput();
      }
    }

    Object read(byte[] bytes) {
      Input input = new Input(bytes);
      Object message = kryo.readClassAndObject(input);
      checkEnd(message, bytes.length, input.position());
      return message;
    }

    /** Reads the message that fills {@code buffer} from its position to its limit. */
    Object read(ByteBuffer buffer) {
      int start = buffer.position();
      ByteBufferInput input = new ByteBufferInput(buffer);
      Object message = kryo.readClassAndObject(input);
      checkEnd(message, buffer.limit() - start, input.position() - start);
      buffer.position(input.position());
      return message;
    }

    private static void checkEnd(Object message, int length, int read) {
      if (read != length) {
        throw new KryoException(
            "message of " + length + " bytes has " + (length - read) + " trailing bytes after "
                + (message == null ? "null" : message.getClass().getName()));
      }
    }

    private Output newOutput() {
      return new Output(Math.min(4096, settings.retainedBufferSize()), settings.maxMessageSize());
    }
  }
}
