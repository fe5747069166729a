package io.tabula.persistence.tablet;

import io.tabula.persistence.encoding.ByteSink;
import io.tabula.persistence.encoding.VarInts;
import io.tabula.persistence.storage.CorruptionException;
import io.tabula.persistence.storage.ReadableFile;
import io.tabula.persistence.storage.Storage;
import io.tabula.persistence.storage.WritableFile;
import java.io.IOException;
import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.zip.CRC32C;

/**
 * Reads and writes a {@link TabletManifest} (docs/formats/manifest.md). The file is
 * replaced whole and atomically: written to {@code MANIFEST.tmp}, fsynced, renamed over
 * {@code MANIFEST}, and the folder fsynced, so a crash leaves the old or the new manifest,
 * never a mix.
 *
 * <pre>
 * header: u64 magic "TBLAMNFT" | u32 version | u32 body length | u32 CRC32C(body)
 * body:   bytes table | bytes tabletId | bytes startRow | bytes endRow | u8 state
 *         | i64 redoPoint | i64 lastSequence | varint nextFileNumber
 *         | varint groupCount × (bytes group | varint fileCount × (bytes path | u8 flags))
 *         | if state = SPLIT: bytes splitRow | bytes leftId | bytes rightId
 * bytes := varint length | bytes;  fixed-width integers big-endian;  flags bit 0 = owned
 * </pre>
 */
public final class ManifestCodec {
  private ManifestCodec() {}

  public static String path(String dir) {
    return Storage.path(dir, ManifestFormat.FILE_NAME);
  }

  public static boolean exists(Storage storage, String dir) {
    return storage.exists(path(dir));
  }

  /** Atomically replaces the manifest in {@code dir}. */
  public static void write(Storage storage, String dir, TabletManifest m) throws IOException {
    byte[] file = encode(m);
    String tmp = Storage.path(dir, ManifestFormat.TEMP_NAME);
    try (WritableFile w = storage.create(tmp)) {
      w.append(file);
      w.sync();
    }
    storage.rename(tmp, path(dir));
    storage.syncDirectory(dir);
  }

  public static TabletManifest read(Storage storage, String dir) throws IOException {
    String p = path(dir);
    byte[] file;
    try (ReadableFile r = storage.open(p)) {
      if (r.size() < ManifestFormat.HEADER_BYTES) {
        throw new CorruptionException(p, 0, "file of " + r.size() + " bytes is shorter than the manifest header");
      }
      if (r.size() > ManifestFormat.HEADER_BYTES + ManifestFormat.MAX_BODY_BYTES) {
        throw new CorruptionException(p, 0, "file of " + r.size() + " bytes is larger than any manifest");
      }
      file = r.readFully(0, (int) r.size());
    }
    return decode(p, file);
  }

  static byte[] encode(TabletManifest m) {
    ByteSink body = new ByteSink(256);
    body.putString(m.table()).putString(m.tabletId()).putLengthPrefixed(m.startRow()).putLengthPrefixed(m.endRow())
        .putByte(m.state().code()).putLong(m.redoPoint()).putLong(m.lastSequence()).putVar(m.nextFileNumber())
        .putVar(m.groups().size());
    m.groups().forEach((g, files) -> {
      body.putString(g).putVar(files.size());
      for (TabletManifest.FileRef f : files) {
        body.putString(f.path()).putByte(f.owned() ? ManifestFormat.FILE_OWNED : 0);
      }
    });
    if (m.split() != null) {
      body.putLengthPrefixed(m.split().splitRow()).putString(m.split().leftId()).putString(m.split().rightId());
    }
    byte[] b = body.toArray();
    CRC32C crc = new CRC32C();
    crc.update(b);
    ByteBuffer out = ByteBuffer.allocate(ManifestFormat.HEADER_BYTES + b.length);
    out.putLong(ManifestFormat.MAGIC).putInt(ManifestFormat.VERSION).putInt(b.length).putInt((int) crc.getValue());
    out.put(b);
    return out.array();
  }

  static TabletManifest decode(String path, byte[] file) throws CorruptionException {
    ByteBuffer in = ByteBuffer.wrap(file);
    if (file.length < ManifestFormat.HEADER_BYTES) {
      throw new CorruptionException(path, 0, "shorter than the manifest header");
    }
    long magic = in.getLong(ManifestFormat.MAGIC_OFFSET);
    if (magic != ManifestFormat.MAGIC) {
      throw new CorruptionException(path, ManifestFormat.MAGIC_OFFSET, String.format("bad magic 0x%016x", magic));
    }
    int version = in.getInt(ManifestFormat.VERSION_OFFSET);
    if (version != ManifestFormat.VERSION) {
      throw new CorruptionException(path, ManifestFormat.VERSION_OFFSET, "unknown manifest version " + version);
    }
    int len = in.getInt(ManifestFormat.BODY_LENGTH_OFFSET);
    if (len < 0 || len != file.length - ManifestFormat.HEADER_BYTES) {
      throw new CorruptionException(path, ManifestFormat.BODY_LENGTH_OFFSET, "body length " + len
          + " does not match the file's " + (file.length - ManifestFormat.HEADER_BYTES) + " bytes");
    }
    CRC32C crc = new CRC32C();
    crc.update(file, ManifestFormat.HEADER_BYTES, len);
    if ((int) crc.getValue() != in.getInt(ManifestFormat.BODY_CRC_OFFSET)) {
      throw new CorruptionException(path, ManifestFormat.HEADER_BYTES, "body checksum mismatch");
    }
    in.position(ManifestFormat.HEADER_BYTES);
    try {
      String table = ByteSink.readString(in);
      String id = ByteSink.readString(in);
      byte[] start = ByteSink.readBytes(in);
      byte[] end = ByteSink.readBytes(in);
      int stateOffset = in.position();
      TabletManifest.State state = TabletManifest.State.fromCode(in.get() & 0xFF);
      if (state == null) {
        throw new CorruptionException(path, stateOffset, "unknown tablet state code " + file[stateOffset]);
      }
      long redo = in.getLong();
      long last = in.getLong();
      long nextFile = VarInts.getVarLong(in);
      int groupCount = VarInts.getVarInt(in);
      Map<String, List<TabletManifest.FileRef>> groups = new LinkedHashMap<>();
      for (int g = 0; g < groupCount; g++) {
        String name = ByteSink.readString(in);
        int n = VarInts.getVarInt(in);
        List<TabletManifest.FileRef> files = new ArrayList<>();
        for (int i = 0; i < n; i++) {
          String p = ByteSink.readString(in);
          files.add(new TabletManifest.FileRef(p, (in.get() & ManifestFormat.FILE_OWNED) != 0));
        }
        groups.put(name, files);
      }
      TabletManifest.SplitInfo split = null;
      if (state == TabletManifest.State.SPLIT) {
        split = new TabletManifest.SplitInfo(ByteSink.readBytes(in), ByteSink.readString(in), ByteSink.readString(in));
      }
      if (in.hasRemaining()) {
        throw new CorruptionException(path, in.position(), in.remaining() + " unexpected bytes after the body");
      }
      return new TabletManifest(table, id, start, end, state, redo, last, nextFile, groups, split);
    } catch (BufferUnderflowException | IllegalArgumentException e) {
      throw new CorruptionException(path, in.position(), "malformed body: " + e.getMessage());
    }
  }
}
