package io.tabula.persistence.journal;

import io.tabula.persistence.encoding.ByteSink;
import io.tabula.persistence.encoding.VarInts;
import io.tabula.persistence.storage.CorruptionException;
import io.tabula.persistence.storage.ReadableFile;
import io.tabula.persistence.storage.Storage;
import java.io.IOException;
import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * An epoch's {@code HORIZON} in the master's journal: the files, and how many bytes of each,
 * that its master read as the history before it, and per persistence id the highest sequence
 * number and how far events were deleted (so records left out stay accounted for). See
 * docs/formats/master-journal.md.
 *
 * <pre>
 * u64 magic "TBLAMJHZ" | u32 version | u64 epoch
 * varint file count | (string path | u64 length)*
 * varint id count | (string persistence id | u64 highest sequence number | u64 deleted to)*
 * u32 CRC32C of every byte before it
 * </pre>
 */
record Horizon(List<File> files, Map<String, long[]> summary) {
  /** A file read, to {@code length} bytes; {@code path} is relative to the journal's folder. */
  record File(String path, long length) {}

  /** Reads and checks the horizon at {@code path}. */
  static Horizon read(Storage storage, String path) throws IOException {
    byte[] b;
    try (ReadableFile f = storage.open(path)) {
      if (f.size() > MasterJournal.MAX_RECORD) {
        throw new CorruptionException(path, 0, "a horizon of " + f.size() + " bytes");
      }
      b = new byte[(int) f.size()];
      f.readFully(0, b, 0, b.length);
    }
    if (b.length < 8 + 4 + 8 + 4 || ByteSink.getLongAt(b, 0) != MasterJournal.HORIZON_MAGIC) {
      throw new CorruptionException(path, 0, "not a master journal horizon (bad magic)");
    }
    if (ByteSink.getIntAt(b, b.length - 4) != MasterJournal.crc(b, 0, b.length - 4, new byte[0])) {
      throw new CorruptionException(path, b.length - 4, "horizon checksum mismatch");
    }
    if (ByteSink.getIntAt(b, 8) != MasterJournal.VERSION) {
      throw new CorruptionException(path, 8, "unknown horizon version " + ByteSink.getIntAt(b, 8));
    }
    ByteBuffer in = ByteBuffer.wrap(b, 20, b.length - 24);
    try {
      int files = VarInts.getVarInt(in);
      List<File> out = new ArrayList<>();
      for (int i = 0; i < files; i++) {
        out.add(new File(ByteSink.readString(in), in.getLong()));
      }
      int ids = VarInts.getVarInt(in);
      Map<String, long[]> summary = new LinkedHashMap<>();
      for (int i = 0; i < ids; i++) {
        summary.put(ByteSink.readString(in), new long[] {in.getLong(), in.getLong()});
      }
      if (in.hasRemaining()) {
        throw new IllegalArgumentException(in.remaining() + " bytes after the last field");
      }
      return new Horizon(out, summary);
    } catch (IllegalArgumentException | BufferUnderflowException e) {
      throw new CorruptionException(path, in.position(), "a horizon whose checksum holds does not parse: " + e);
    }
  }

  /** The bytes of this horizon as epoch {@code epoch}'s. */
  byte[] encode(long epoch) {
    ByteSink out = new ByteSink(256);
    out.putLong(MasterJournal.HORIZON_MAGIC).putInt(MasterJournal.VERSION).putLong(epoch);
    out.putVar(files.size());
    for (File f : files) {
      out.putString(f.path()).putLong(f.length());
    }
    out.putVar(summary.size());
    summary.forEach((id, v) -> out.putString(id).putLong(v[0]).putLong(v[1]));
    out.putInt(MasterJournal.crc(out.array(), 0, out.size(), new byte[0]));
    return out.toArray();
  }
}
