package io.tabula.protocol.kryo;

import com.esotericsoftware.kryo.Kryo;
import com.esotericsoftware.kryo.Serializer;
import com.esotericsoftware.kryo.io.Input;
import com.esotericsoftware.kryo.io.Output;
import io.tabula.protocol.errors.Refusal;
import io.tabula.protocol.errors.Refused;

/**
 * Writes a {@link Refused} as its {@link Refusal} record (the code by name, then the message)
 * and reads it back as the same typed exception: an exception's stack and class are never
 * sent, and nothing but this one class is made from the wire.
 */
final class RefusedSerializer extends Serializer<Refused> {
  RefusedSerializer() {
    super(false, true);
  }

  @Override
  public void write(Kryo kryo, Output output, Refused refused) {
    kryo.writeObject(output, refused.refusal());
  }

  @Override
  public Refused read(Kryo kryo, Input input, Class<? extends Refused> type) {
    return kryo.readObject(input, Refusal.class).exception();
  }
}
