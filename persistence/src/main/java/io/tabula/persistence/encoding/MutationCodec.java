package io.tabula.persistence.encoding;

import io.tabula.persistence.model.CellKind;
import io.tabula.persistence.model.Mutation;
import io.tabula.persistence.model.RowMutation;
import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * Binary form of a {@link RowMutation}, as carried in commit-log records
 * (docs/formats/commitlog.md, "Row mutation"):
 *
 * <pre>
 * varint rowLen | row | varint count | count × mutation
 * mutation := u8 code | fields
 *   1 SET_CELL       : bytes family | bytes qualifier | i64 timestamp | bytes value
 *   2 DELETE_COLUMN  : bytes family | bytes qualifier | i64 startInclusive | i64 endExclusive
 *   3 DELETE_FAMILY  : bytes family
 *   4 DELETE_ROW     : (nothing)
 * bytes := varint length | that many bytes;  i64 := 8 bytes big-endian
 * </pre>
 *
 * The codes are {@link CellKind} codes. Stateless; thread-safe.
 */
public final class MutationCodec {
  private MutationCodec() {}

  public static byte[] encode(RowMutation rm) {
    ByteArrayOutputStream out = new ByteArrayOutputStream(64 + rm.row().length);
    byte[] scratch = new byte[10];
    writeBytes(out, scratch, rm.row());
    writeVar(out, scratch, rm.mutations().size());
    for (Mutation m : rm.mutations()) {
      if (m instanceof Mutation.SetCell s) {
        out.write(CellKind.PUT.code());
        writeBytes(out, scratch, s.family().getBytes(StandardCharsets.UTF_8));
        writeBytes(out, scratch, s.qualifier());
        writeLong(out, s.timestamp());
        writeBytes(out, scratch, s.value());
      } else if (m instanceof Mutation.DeleteFromColumn d) {
        out.write(CellKind.DELETE_COLUMN.code());
        writeBytes(out, scratch, d.family().getBytes(StandardCharsets.UTF_8));
        writeBytes(out, scratch, d.qualifier());
        writeLong(out, d.startInclusive());
        writeLong(out, d.endExclusive());
      } else if (m instanceof Mutation.DeleteFromFamily f) {
        out.write(CellKind.DELETE_FAMILY.code());
        writeBytes(out, scratch, f.family().getBytes(StandardCharsets.UTF_8));
      } else {
        out.write(CellKind.DELETE_ROW.code());
      }
    }
    return out.toByteArray();
  }

  /**
   * Decodes what {@link #encode} wrote.
   *
   * @throws IllegalArgumentException if the bytes are not a well-formed row mutation
   */
  public static RowMutation decode(ByteBuffer in) {
    byte[] row = readBytes(in);
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
        case PUT -> new Mutation.SetCell(readString(in), readBytes(in), in.getLong(), readBytes(in));
        case DELETE_COLUMN -> new Mutation.DeleteFromColumn(readString(in), readBytes(in), in.getLong(), in.getLong());
        case DELETE_FAMILY -> new Mutation.DeleteFromFamily(readString(in));
        case DELETE_ROW -> Mutation.DeleteFromRow.INSTANCE;
      });
    }
    return new RowMutation(row, ms);
  }

  private static void writeVar(ByteArrayOutputStream out, byte[] scratch, long v) {
    int n = VarInts.putVarLong(scratch, 0, v);
    out.write(scratch, 0, n);
  }

  private static void writeBytes(ByteArrayOutputStream out, byte[] scratch, byte[] b) {
    writeVar(out, scratch, b.length);
    out.write(b, 0, b.length);
  }

  private static void writeLong(ByteArrayOutputStream out, long v) {
    for (int shift = 56; shift >= 0; shift -= 8) {
      out.write((int) (v >>> shift));
    }
  }

  private static byte[] readBytes(ByteBuffer in) {
    int n = VarInts.getVarInt(in);
    if (n > in.remaining()) {
      throw new IllegalArgumentException("byte string of " + n + " bytes runs past the record's end");
    }
    byte[] b = new byte[n];
    in.get(b);
    return b;
  }

  private static String readString(ByteBuffer in) {
    return new String(readBytes(in), StandardCharsets.UTF_8);
  }
}
