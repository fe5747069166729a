package io.tabula.persistence.encoding;

import io.tabula.persistence.model.CellKind;
import io.tabula.persistence.model.Mutation;
import io.tabula.persistence.model.RowMutation;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

/**
 * Binary form of a {@link RowMutation}, as carried in commit-log records
 * (docs/formats/commitlog.md, "Row-mutation payload"): a record's payload is the row mutation
 * as applied, preceded by the server time its cells took if any did ({@link Logged}):
 *
 * <pre>
 * payload := rowMutation                          (no cell took the server time)
 *          | 0x00 | i64 serverTime | rowMutation  (cells sent with {@link Mutation#SERVER_TIME} took serverTime)
 * rowMutation := varint rowLen | row | varint count | count × mutation
 * mutation := u8 code | fields
 *   1 SET_CELL       : bytes family | bytes qualifier | i64 timestamp | bytes value
 *   2 DELETE_COLUMN  : bytes family | bytes qualifier | i64 startInclusive | i64 endExclusive
 *   3 DELETE_FAMILY  : bytes family
 *   4 DELETE_ROW     : (nothing)
 *   5 MERGE_TO_CELL  : bytes family | bytes qualifier | i64 timestamp | bytes state
 *   6 TOKEN          : bytes token | i64 timestamp (when the tablet wrote it)
 * bytes := varint length | that many bytes;  i64 := 8 bytes big-endian
 * </pre>
 *
 * The codes are {@link CellKind} codes. An {@code AddToCell} is logged as the MERGE_TO_CELL of
 * its operand (the tablet turns one into the other with the family's aggregator), so replay
 * needs no schema. A row mutation never starts with a zero byte (its row
 * is not empty, so the varint of its length is not 0): that byte marks the server time, so
 * replay tells a server time from a client's timestamp, and payloads written before server
 * times were logged read as they are. Stateless; thread-safe.
 */
public final class MutationCodec {
  private MutationCodec() {}

  /** The byte before a logged server time: a row mutation never starts with it. */
  private static final byte SERVER_TIME_MARKER = 0;

  /**
   * A row mutation as a commit-log record carries it: resolved (no cell left at {@link
   * Mutation#SERVER_TIME}), with the server time its cells sent without a timestamp took, or
   * {@link #NO_SERVER_TIME} if none was.
   */
  public record Logged(RowMutation mutation, long serverTime) {
    /** No cell of the row mutation took the server time. */
    public static final long NO_SERVER_TIME = -1;

    public Logged {
      if (serverTime < 0 && serverTime != NO_SERVER_TIME) {
        throw new IllegalArgumentException("a server time is at least 0, was " + serverTime);
      }
    }
  }

  /** Appends the payload of {@code logged} to {@code out}: its server time (if any), then its row mutation. */
  public static void encodeTo(Logged logged, ByteSink out) {
    if (logged.serverTime() != Logged.NO_SERVER_TIME) {
      out.putByte(SERVER_TIME_MARKER).putLong(logged.serverTime());
    }
    encodeTo(logged.mutation(), out);
  }

  /**
   * Decodes a payload {@link #encodeTo(Logged, ByteSink)} wrote, or a bare row mutation (a
   * payload from before server times were logged: no server time).
   *
   * @throws IllegalArgumentException if the bytes are not a well-formed payload
   */
  public static Logged decodeLogged(ByteBuffer in) {
    long serverTime = Logged.NO_SERVER_TIME;
    if (in.hasRemaining() && in.get(in.position()) == SERVER_TIME_MARKER) {
      in.get();
      if (in.remaining() < Long.BYTES) {
        throw new IllegalArgumentException("payload ends inside its server time");
      }
      serverTime = in.getLong();
      if (serverTime < 0) {
        throw new IllegalArgumentException("negative server time " + serverTime);
      }
    }
    return new Logged(decode(in), serverTime);
  }

  public static byte[] encode(RowMutation rm) {
    ByteSink out = new ByteSink(encodedSizeEstimate(rm));
    encodeTo(rm, out);
    return out.toArray();
  }

  /** Appends the encoding of {@code rm} to {@code out}. */
  public static void encodeTo(RowMutation rm, ByteSink out) {
    out.putLengthPrefixed(rm.row()).putVar(rm.mutations().size());
    for (Mutation m : rm.mutations()) {
      if (m instanceof Mutation.SetCell s) {
        out.putByte(CellKind.PUT.code()).putString(s.family()).putLengthPrefixed(s.qualifier()).putLong(s.timestamp())
            .putLengthPrefixed(s.value());
      } else if (m instanceof Mutation.DeleteFromColumn d) {
        out.putByte(CellKind.DELETE_COLUMN.code()).putString(d.family()).putLengthPrefixed(d.qualifier())
            .putLong(d.startInclusive()).putLong(d.endExclusive());
      } else if (m instanceof Mutation.DeleteFromFamily f) {
        out.putByte(CellKind.DELETE_FAMILY.code()).putString(f.family());
      } else if (m instanceof Mutation.MergeToCell mc) {
        out.putByte(CellKind.MERGE.code()).putString(mc.family()).putLengthPrefixed(mc.qualifier())
            .putLong(mc.timestamp()).putLengthPrefixed(mc.state());
      } else if (m instanceof Mutation.Token t) {
        out.putByte(CellKind.TOKEN.code()).putLengthPrefixed(t.token()).putLong(t.timestamp());
      } else if (m instanceof Mutation.AddToCell) {
        throw new IllegalArgumentException("an AddToCell is logged as the MergeToCell of its operand: " + m);
      } else {
        out.putByte(CellKind.DELETE_ROW.code());
      }
    }
  }

  /** An upper bound of the encoded size, so encoding allocates once. */
  private static int encodedSizeEstimate(RowMutation rm) {
    long n = 10 + 5 + rm.row().length;
    for (Mutation m : rm.mutations()) {
      n += 1 + 3 * 5 + 16 + 4 * 64;
      if (m instanceof Mutation.SetCell s) {
        n += s.qualifier().length + s.value().length;
      } else if (m instanceof Mutation.MergeToCell mc) {
        n += mc.qualifier().length + mc.state().length;
      } else if (m instanceof Mutation.Token t) {
        n += t.token().length;
      } else if (m instanceof Mutation.DeleteFromColumn d) {
        n += d.qualifier().length;
      }
    }
    return (int) Math.min(n, Integer.MAX_VALUE - 64);
  }

  /**
   * Decodes a row mutation {@link #encode} wrote.
   *
   * @throws IllegalArgumentException if the bytes are not a well-formed row mutation
   */
  public static RowMutation decode(ByteBuffer in) {
    try {
      return decodeUnchecked(in);
    } catch (java.nio.BufferUnderflowException e) {
      throw new IllegalArgumentException("row mutation ends inside a fixed-width field", e);
    }
  }

  private static RowMutation decodeUnchecked(ByteBuffer in) {
    byte[] row = ByteSink.readBytes(in);
    int count = VarInts.getVarInt(in);
    List<Mutation> ms = new ArrayList<>(Math.min(count, 1024));
    for (int i = 0; i < count; i++) {
      if (!in.hasRemaining()) {
        throw new IllegalArgumentException("row mutation ends inside mutation " + i);
      }
      int code = in.get() & 0xFF;
      CellKind kind = CellKind.fromCode(code);
      if (kind == null) {
        throw new IllegalArgumentException("unknown mutation code " + code + " in mutation " + i);
      }
      ms.add(switch (kind) {
        case PUT -> new Mutation.SetCell(ByteSink.readString(in), ByteSink.readBytes(in), in.getLong(),
            ByteSink.readBytes(in));
        case DELETE_COLUMN -> new Mutation.DeleteFromColumn(ByteSink.readString(in), ByteSink.readBytes(in),
            in.getLong(), in.getLong());
        case DELETE_FAMILY -> new Mutation.DeleteFromFamily(ByteSink.readString(in));
        case DELETE_ROW -> Mutation.DeleteFromRow.INSTANCE;
        case MERGE -> new Mutation.MergeToCell(ByteSink.readString(in), ByteSink.readBytes(in), in.getLong(),
            ByteSink.readBytes(in));
        case TOKEN -> new Mutation.Token(ByteSink.readBytes(in), in.getLong());
      });
    }
    return new RowMutation(row, ms);
  }
}
