package io.tabula.client;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.ByteString;
import org.junit.jupiter.api.function.Executable;

/** Byte strings and refusal checks shared by the client's unit tests. */
final class Fixtures {
  private Fixtures() {}

  static ByteString utf8(String s) {
    return ByteString.copyFromUtf8(s);
  }

  /** The bytes given as ints, so 0x80..0xff need no casts. */
  static ByteString bytes(int... b) {
    byte[] out = new byte[b.length];
    for (int i = 0; i < b.length; i++) {
      out[i] = (byte) b[i];
    }
    return ByteString.copyFrom(out);
  }

  /** The seed of a randomized test: -Dtabula.seed=N, or else a new one; printed so a failure can be replayed. */
  static long seed(Class<?> test) {
    long seed = Long.getLong("tabula.seed", System.nanoTime());
    System.out.println(test.getSimpleName() + " seed = " + seed + " (rerun with -Dtabula.seed=" + seed + ")");
    return seed;
  }

  /** Checks that {@code call} is refused with an IllegalArgumentException whose message contains {@code named}. */
  static void assertRefused(String named, Executable call) {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, call);
    assertTrue(e.getMessage().contains(named), "message '" + e.getMessage() + "' should name '" + named + "'");
  }
}
