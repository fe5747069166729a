package io.tabula.cluster.grpc;

import com.google.bigtable.v2.FeatureFlags;
import com.google.protobuf.InvalidProtocolBufferException;
import java.util.Base64;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.pekko.grpc.javadsl.Metadata;

/**
 * What a client says it supports in its {@code bigtable-features} header (a base64 {@link
 * FeatureFlags} message, sent by the official clients on every data call). Tabula reads one
 * flag: {@code microsecond_timestamp}. A client built for Cloud Bigtable (not the emulator's
 * settings) sets it and writes cells with microsecond timestamps, which Cloud Bigtable accepts
 * for tables of millisecond granularity; Tabula then truncates them to the millisecond (its
 * tables' granularity) where it otherwise refuses them, as the emulator does. Thread-safe; a
 * few distinct header values are remembered (every client of one build sends the same).
 */
final class ClientFeatures {
  private static final String HEADER = "bigtable-features";
  private static final int REMEMBERED = 64;
  private static final Map<String, Boolean> MICROS = new ConcurrentHashMap<>();

  private ClientFeatures() {}

  /** Whether the client that sent {@code metadata} writes microsecond timestamps. */
  static boolean microsecondTimestamps(Metadata metadata) {
    Optional<String> value = metadata.getText(HEADER);
    if (value.isEmpty()) {
      return false;
    }
    Boolean known = MICROS.get(value.get());
    if (known != null) {
      return known;
    }
    boolean micros = parse(value.get());
    if (MICROS.size() < REMEMBERED) {
      MICROS.put(value.get(), micros);
    }
    return micros;
  }

  private static boolean parse(String value) {
    try {
      return FeatureFlags.parseFrom(Base64.getUrlDecoder().decode(value.replace('+', '-').replace('/', '_')
          .replace("=", ""))).getMicrosecondTimestamp();
    } catch (IllegalArgumentException | InvalidProtocolBufferException e) {
      return false; // a header that is not the flags: the client claims nothing
    }
  }
}
