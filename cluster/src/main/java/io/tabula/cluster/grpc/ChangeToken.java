package io.tabula.cluster.grpc;

import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Base64;

/**
 * The {@code token} string of a change stream's continuation token (docs/change-streams.md):
 * where a reader stands, self-contained, so that any node can resume from it. Either a
 * position, the last sequence of a tablet that the reader has seen the changes of, or a
 * time, for a partition not read yet (those a reader must open from a start time when its
 * partition no longer matches a tablet). URL-safe base64 of a version byte, a kind byte and
 * the fields; at most {@value #MAX_CHARS} characters. Immutable.
 *
 * @param tabletId the tablet read (a position), or null (a time)
 * @param after the last sequence seen of that tablet (a position), or -1
 * @param startMicros the commit time to read from (a time), or -1
 */
public record ChangeToken(String tabletId, long after, long startMicros) {
  static final int VERSION = 1;
  static final int POSITION = 1;
  static final int TIME = 2;
  /** The longest token string accepted: a tablet id is short. */
  public static final int MAX_CHARS = 512;

  /** The position after sequence {@code after} of tablet {@code tabletId}. */
  public static ChangeToken position(String tabletId, long after) {
    return new ChangeToken(tabletId, after, -1);
  }

  /** The changes committed at or after {@code startMicros}, of whatever tablet now holds the partition. */
  public static ChangeToken time(long startMicros) {
    return new ChangeToken(null, -1, startMicros);
  }

  public boolean isPosition() {
    return tabletId != null;
  }

  public String encode() {
    ByteBuffer b;
    if (isPosition()) {
      byte[] id = tabletId.getBytes(StandardCharsets.UTF_8);
      b = ByteBuffer.allocate(2 + 2 + id.length + 8).put((byte) VERSION).put((byte) POSITION)
          .putShort((short) id.length).put(id).putLong(after);
    } else {
      b = ByteBuffer.allocate(2 + 8).put((byte) VERSION).put((byte) TIME).putLong(startMicros);
    }
    return Base64.getUrlEncoder().withoutPadding().encodeToString(b.array());
  }

  /**
   * The token a string encodes.
   *
   * @throws MalformedTokenException if it is not one this node's kind wrote
   */
  public static ChangeToken decode(String s) {
    if (s.isEmpty() || s.length() > MAX_CHARS) {
      throw new MalformedTokenException(s.isEmpty() ? "is empty" : "is longer than any token Tabula writes");
    }
    byte[] bytes;
    try {
      bytes = Base64.getUrlDecoder().decode(s);
    } catch (IllegalArgumentException e) {
      throw new MalformedTokenException("is not a token Tabula wrote (not URL-safe base64)");
    }
    ByteBuffer in = ByteBuffer.wrap(bytes);
    try {
      if (in.get() != VERSION) {
        throw new MalformedTokenException("has an unknown version");
      }
      int kind = in.get();
      ChangeToken t;
      if (kind == POSITION) {
        int n = in.getShort();
        if (n <= 0 || n > in.remaining()) {
          throw new MalformedTokenException("names no tablet");
        }
        byte[] id = new byte[n];
        in.get(id);
        t = position(new String(id, StandardCharsets.UTF_8), in.getLong());
        if (t.after() < 0 || !t.tabletId().matches("[A-Za-z0-9_.-]+")) {
          throw new MalformedTokenException("names no tablet position");
        }
      } else if (kind == TIME) {
        t = time(in.getLong());
        if (t.startMicros() < 0) {
          throw new MalformedTokenException("holds a negative time");
        }
      } else {
        throw new MalformedTokenException("has an unknown kind " + kind);
      }
      if (in.hasRemaining()) {
        throw new MalformedTokenException("has bytes after its end");
      }
      return t;
    } catch (BufferUnderflowException e) {
      throw new MalformedTokenException("is cut short");
    }
  }

  /** A token string that is not one Tabula wrote: the reader's mistake, answered INVALID_ARGUMENT. */
  public static final class MalformedTokenException extends IllegalArgumentException {
    private final String problem;

    MalformedTokenException(String problem) {
      super("the token " + problem);
      this.problem = problem;
    }

    public String problem() {
      return problem;
    }
  }
}
