package io.tabula.protocol.kryo;

import com.esotericsoftware.kryo.Kryo;
import com.esotericsoftware.kryo.Serializer;
import com.esotericsoftware.kryo.io.Input;
import com.esotericsoftware.kryo.io.Output;
import org.apache.pekko.Done;

/** Writes nothing for Pekko's {@link Done} singleton and reads back that same instance. */
final class DoneSerializer extends Serializer<Done> {
  DoneSerializer() {
    super(false, true);
  }

  @Override
  public void write(Kryo kryo, Output output, Done done) {}

  @Override
  public Done read(Kryo kryo, Input input, Class<? extends Done> type) {
    return Done.getInstance();
  }
}
