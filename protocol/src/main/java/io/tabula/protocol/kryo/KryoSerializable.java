package io.tabula.protocol.kryo;

/** Marks a message type that Pekko serializes with Kryo. */
public interface KryoSerializable {}
