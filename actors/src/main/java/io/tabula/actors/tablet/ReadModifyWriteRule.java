package io.tabula.actors.tablet;

import io.tabula.protocol.kryo.KryoSerializable;

/** One rule of a read-modify-write (paper §3 counters): append bytes, or add to a 64-bit big-endian integer. */
public sealed interface ReadModifyWriteRule extends KryoSerializable {
  String family();

  byte[] qualifier();

  record Append(String family, byte[] qualifier, byte[] suffix) implements ReadModifyWriteRule {}

  record Increment(String family, byte[] qualifier, long delta) implements ReadModifyWriteRule {}
}
