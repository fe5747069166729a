package io.tabula.protocol.kryo;

/**
 * Marker for Tabula's internal actor messages, events and replies that travel between nodes.
 *
 * <p>{@code reference.conf} of this module binds every implementing type to {@link
 * KryoSerializer}. Implementing this interface is not enough on its own: the concrete class
 * (and every class reachable from its fields) needs an explicit id under {@code
 * tabula.kryo.registrations}, or serialization fails with a message naming the missing class.
 * The ids are declared in this module's {@code reference.conf} (JDK, Pekko and protocol types)
 * and in the actors module's (its messages and events, and the engine and streams types they
 * carry); that file lists the ranges.
 */
public interface KryoSerializable {}
