package io.tabula.protocol.kryo;

import com.esotericsoftware.kryo.Kryo;
import com.esotericsoftware.kryo.KryoException;
import com.esotericsoftware.kryo.Serializer;
import com.esotericsoftware.kryo.io.Input;
import com.esotericsoftware.kryo.io.Output;
import io.tabula.protocol.errors.Refusal;
import io.tabula.protocol.errors.Refused;
import org.apache.pekko.pattern.StatusReply;

/**
 * Writes a {@link StatusReply}.
 *
 * <p>Layout: one code byte, then
 *
 * <ul>
 *   <li>{@value #SUCCESS}: the value, written with its class id ({@code writeClassAndObject},
 *       so the value's class must be registered too; {@code null} is allowed);
 *   <li>{@value #ERROR}: the error text as a Kryo string;
 *   <li>{@value #REFUSED}: a {@link Refusal} (what {@link Refusal#reply()} makes), as the
 *       record: its code by name, then its message.
 * </ul>
 *
 * <p>A refusal comes back as the same typed {@link Refused}, so the receiver matches its
 * code, never its text. Any other error travels as text only: a
 * {@link StatusReply.ErrorMessage} (what {@code StatusReply.error(String)} makes) comes back
 * unchanged; any other exception comes back as an {@code ErrorMessage} reading
 * {@code "<exception class>: <message>"}. Arbitrary exception classes are never
 * instantiated from the wire. Codes are never reused.
 */
final class StatusReplySerializer extends Serializer<StatusReply<?>> {
  static final byte SUCCESS = 1;
  static final byte ERROR = 2;
  static final byte REFUSED = 3;

  StatusReplySerializer() {
    super(false, true);
  }

  @Override
  public void write(Kryo kryo, Output output, StatusReply<?> reply) {
    if (reply.isSuccess()) {
      output.writeByte(SUCCESS);
      kryo.writeClassAndObject(output, reply.getValue());
    } else if (reply.getError() instanceof Refused r) {
      output.writeByte(REFUSED);
      kryo.writeObject(output, r.refusal());
    } else {
      output.writeByte(ERROR);
      output.writeString(errorText(reply.getError()));
    }
  }

  @Override
  public StatusReply<?> read(Kryo kryo, Input input, Class<? extends StatusReply<?>> type) {
    byte code = input.readByte();
    return switch (code) {
      case SUCCESS -> StatusReply.success(kryo.readClassAndObject(input));
      case ERROR -> StatusReply.error(input.readString());
      case REFUSED -> kryo.readObject(input, Refusal.class).reply();
      default -> throw new KryoException("unknown StatusReply code " + code);
    };
  }

  private static String errorText(Throwable error) {
    if (error instanceof StatusReply.ErrorMessage) {
      return error.getMessage();
    }
    return error.getClass().getName() + ": " + error.getMessage();
  }
}
