package io.tabula.persistence.backup;

import io.tabula.persistence.encoding.ByteSink;
import io.tabula.persistence.encoding.VarInts;
import io.tabula.persistence.schema.Aggregator;
import io.tabula.persistence.schema.ColumnFamily;
import io.tabula.persistence.schema.GcPolicy;
import io.tabula.persistence.schema.LocalityGroup;
import io.tabula.persistence.schema.TableSchema;
import io.tabula.persistence.sstable.Compression;
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
import java.util.TreeMap;
import java.util.UUID;
import java.util.zip.CRC32C;

/**
 * Reads and writes backup manifests, {@code backups/<id>/MANIFEST} under the storage root, in
 * the format of docs/formats/backup-manifest.md. A manifest is written whole under a temporary
 * name and then renamed, so a reader finds either none or all of it. Stateless.
 */
public final class BackupManifestCodec {
  /** "TBLABKUP". */
  static final long MAGIC = 0x54424C41424B5550L;
  static final int VERSION = 3;
  /** The version before a copy named its source backup: still read, as a backup made from its table. */
  private static final int VERSION_WITHOUT_SOURCE = 2;
  /** The version before families carried their aggregator: still read, as families of raw values. */
  private static final int VERSION_WITHOUT_AGGREGATES = 1;
  static final int TYPE_STANDARD = 1;
  static final int TYPE_HOT = 2;
  static final int HEADER_BYTES = 20;
  /** The largest body read: a manifest names ~100 bytes per file; 256 MiB is millions of files. */
  static final int MAX_BODY_BYTES = 256 << 20;
  /** Deeper GC rules than this are refused as corrupt (the API allows 20 levels). */
  static final int MAX_RULE_DEPTH = 64;
  public static final String FOLDER = "backups";
  public static final String NAME = "MANIFEST";

  private BackupManifestCodec() {}

  /** The folder of backup {@code id}. */
  public static String folder(String id) {
    return Storage.path(FOLDER, id);
  }

  /** The manifest of backup {@code id}. */
  public static String path(String id) {
    return Storage.path(folder(id), NAME);
  }

  /** Writes {@code m} as {@code backups/<id>/MANIFEST}; fails if that backup's manifest exists. */
  public static void write(Storage storage, BackupManifest m) throws IOException {
    String dir = folder(m.backupId());
    storage.createDirectories(dir);
    String temp = Storage.path(dir, NAME + ".tmp-" + UUID.randomUUID());
    try (WritableFile f = storage.createNew(temp)) {
      f.append(encode(m));
      f.sync();
    }
    if (!storage.renameIfAbsent(temp, path(m.backupId()))) {
      throw new java.nio.file.FileAlreadyExistsException(path(m.backupId()));
    }
    storage.syncDirectory(dir);
  }

  /** Reads backup {@code id}'s manifest. */
  public static BackupManifest read(Storage storage, String id) throws IOException {
    String p = path(id);
    byte[] file;
    try (ReadableFile r = storage.open(p)) {
      if (r.size() < HEADER_BYTES || r.size() > HEADER_BYTES + (long) MAX_BODY_BYTES) {
        throw new CorruptionException(p, 0, "file of " + r.size() + " bytes cannot be a backup manifest");
      }
      file = r.readFully(0, (int) r.size());
    }
    return decode(p, file);
  }

  /**
   * Deletes what backup {@code id}'s folder holds: its manifest first (from then on the backup
   * names no file, and the sweep may collect what nothing else names), then the rest. The
   * folder itself is the caller's to delete.
   */
  public static void deleteContents(Storage storage, String id) throws IOException {
    if (storage.exists(path(id))) {
      storage.delete(path(id));
    }
    for (String f : storage.list(folder(id))) {
      storage.delete(Storage.path(folder(id), f));
    }
  }

  /** The ids of the backups whose manifest is written, sorted (a folder without one is a backup being made or deleted). */
  public static List<String> ids(Storage storage) throws IOException {
    List<String> out = new ArrayList<>();
    for (String id : storage.list(FOLDER)) {
      if (storage.exists(path(id))) {
        out.add(id);
      }
    }
    return out;
  }

  static byte[] encode(BackupManifest m) {
    ByteSink body = new ByteSink(1024);
    body.putString(m.backupId()).putString(m.sourceTable()).putLong(m.startMicros()).putLong(m.snapshotMicros())
        .putByte(m.hot() ? TYPE_HOT : TYPE_STANDARD).putString(m.sourceBackup());
    TableSchema s = m.schema();
    Map<String, ColumnFamily> families = new TreeMap<>(s.families());
    body.putVar(families.size());
    families.values().forEach(f -> {
      body.putString(f.name()).putString(f.localityGroup());
      putRule(body, f.gcPolicy());
      body.putByte(f.aggregator() == null ? 0 : f.aggregator().code());
    });
    body.putVar(s.groupNames().size());
    for (String g : s.groupNames()) {
      LocalityGroup lg = s.group(g);
      body.putString(lg.name()).putVar(lg.blockSize()).putByte(lg.compression().code()).putVar(lg.bloomBitsPerKey())
          .putByte(lg.inMemory() ? 1 : 0);
    }
    body.putVar(m.tablets().size());
    for (BackupManifest.TabletFiles t : m.tablets()) {
      body.putLengthPrefixed(t.startRow()).putLengthPrefixed(t.endRow()).putLong(t.lastSequence())
          .putLong(t.maxServerTime());
      Map<String, List<BackupManifest.FileEntry>> groups = new TreeMap<>(t.files());
      body.putVar(groups.size());
      groups.forEach((g, files) -> {
        body.putString(g).putVar(files.size());
        files.forEach(f -> body.putString(f.path()).putVar(f.bytes()));
      });
    }
    byte[] b = body.toArray();
    CRC32C crc = new CRC32C();
    crc.update(b);
    ByteBuffer out = ByteBuffer.allocate(HEADER_BYTES + b.length);
    out.putLong(MAGIC).putInt(VERSION).putInt(b.length).putInt((int) crc.getValue()).put(b);
    return out.array();
  }

  /** A GC rule: its kind, then its argument (docs/formats/backup-manifest.md). */
  private static void putRule(ByteSink out, GcPolicy p) {
    if (p instanceof GcPolicy.KeepAll) {
      out.putByte(0);
    } else if (p instanceof GcPolicy.MaxVersions v) {
      out.putByte(1).putVar(v.n());
    } else if (p instanceof GcPolicy.MaxAge a) {
      out.putByte(2).putVar(a.micros());
    } else if (p instanceof GcPolicy.Union u) {
      out.putByte(3).putVar(u.rules().size());
      u.rules().forEach(r -> putRule(out, r));
    } else if (p instanceof GcPolicy.Intersection i) {
      out.putByte(4).putVar(i.rules().size());
      i.rules().forEach(r -> putRule(out, r));
    } else {
      throw new IllegalArgumentException("a GC policy of no known kind: " + p);
    }
  }

  /**
   * The body of a backup file framed as manifests and policies are (magic, format version,
   * body length, CRC32C of the body: {@value #HEADER_BYTES} bytes, then the body), positioned
   * on it, once every part of the frame checks out; the version is at offset 8.
   *
   * @throws CorruptionException naming the file and the offset of the part that does not
   */
  static ByteBuffer framed(String path, byte[] file, long magic, String what,
      java.util.function.IntPredicate knownVersion) throws CorruptionException {
    ByteBuffer in = ByteBuffer.wrap(file);
    if (file.length < HEADER_BYTES) {
      throw new CorruptionException(path, 0, "shorter than the " + what + " header");
    }
    if (in.getLong(0) != magic) {
      throw new CorruptionException(path, 0, String.format("bad magic 0x%016x", in.getLong(0)));
    }
    if (!knownVersion.test(in.getInt(8))) {
      throw new CorruptionException(path, 8, "unknown " + what + " version " + in.getInt(8));
    }
    int len = in.getInt(12);
    if (len != file.length - HEADER_BYTES) {
      throw new CorruptionException(path, 12, "body length " + len + " does not match the file's "
          + (file.length - HEADER_BYTES) + " bytes");
    }
    CRC32C crc = new CRC32C();
    crc.update(file, HEADER_BYTES, len);
    if ((int) crc.getValue() != in.getInt(16)) {
      throw new CorruptionException(path, HEADER_BYTES, "body checksum mismatch");
    }
    in.position(HEADER_BYTES);
    return in;
  }

  static BackupManifest decode(String path, byte[] file) throws CorruptionException {
    ByteBuffer in = framed(path, file, MAGIC, "backup manifest",
        v -> v == VERSION || v == VERSION_WITHOUT_SOURCE || v == VERSION_WITHOUT_AGGREGATES);
    int version = in.getInt(8);
    try {
      String id = ByteSink.readString(in);
      String table = ByteSink.readString(in);
      long began = in.getLong();
      long snapshot = in.getLong();
      int typeAt = in.position();
      int type = in.get() & 0xFF;
      if (type != TYPE_STANDARD && type != TYPE_HOT) {
        throw new CorruptionException(path, typeAt, "unknown backup type " + type);
      }
      String sourceBackup = version >= VERSION ? ByteSink.readString(in) : "";
      int familyCount = count(path, in);
      List<ColumnFamily> families = new ArrayList<>();
      for (int i = 0; i < familyCount; i++) {
        String name = ByteSink.readString(in);
        String group = ByteSink.readString(in);
        GcPolicy rule = rule(path, in, 0);
        Aggregator aggregator = null;
        if (version >= VERSION_WITHOUT_SOURCE) {
          int codeAt = in.position();
          int code = in.get() & 0xFF;
          aggregator = Aggregator.fromCode(code);
          if (code != 0 && aggregator == null) {
            throw new CorruptionException(path, codeAt, "unknown aggregator code " + code);
          }
        }
        families.add(new ColumnFamily(name, rule, group, aggregator));
      }
      int groupCount = count(path, in);
      List<LocalityGroup> groups = new ArrayList<>();
      for (int i = 0; i < groupCount; i++) {
        String name = ByteSink.readString(in);
        int blockSize = VarInts.getVarInt(in);
        int codeAt = in.position();
        Compression c = Compression.fromCode(in.get() & 0xFF);
        if (c == null) {
          throw new CorruptionException(path, codeAt, "unknown compression code " + file[codeAt]);
        }
        groups.add(new LocalityGroup(name, blockSize, c, VarInts.getVarInt(in), in.get() != 0));
      }
      int tabletCount = count(path, in);
      List<BackupManifest.TabletFiles> tablets = new ArrayList<>();
      for (int t = 0; t < tabletCount; t++) {
        byte[] start = ByteSink.readBytes(in);
        byte[] end = ByteSink.readBytes(in);
        long lastSequence = in.getLong();
        long maxServerTime = in.getLong();
        int n = count(path, in);
        Map<String, List<BackupManifest.FileEntry>> files = new LinkedHashMap<>();
        for (int g = 0; g < n; g++) {
          String group = ByteSink.readString(in);
          int fileCount = count(path, in);
          List<BackupManifest.FileEntry> entries = new ArrayList<>();
          for (int f = 0; f < fileCount; f++) {
            entries.add(new BackupManifest.FileEntry(ByteSink.readString(in), VarInts.getVarLong(in)));
          }
          files.put(group, entries);
        }
        tablets.add(new BackupManifest.TabletFiles(start, end, files, lastSequence, maxServerTime));
      }
      if (in.hasRemaining()) {
        throw new CorruptionException(path, in.position(), in.remaining() + " unexpected bytes after the body");
      }
      return new BackupManifest(id, table, began, snapshot, type == TYPE_HOT, TableSchema.of(families, groups),
          tablets, sourceBackup);
    } catch (BufferUnderflowException | IllegalArgumentException | NegativeArraySizeException e) {
      throw new CorruptionException(path, in.position(), "malformed body: " + e.getMessage());
    }
  }

  /** A count, which cannot exceed the bytes left (every counted item takes at least one). */
  private static int count(String path, ByteBuffer in) throws CorruptionException {
    int at = in.position();
    int n = VarInts.getVarInt(in);
    if (n < 0 || n > in.remaining()) {
      throw new CorruptionException(path, at, "count " + n + " is more than the " + in.remaining() + " bytes left");
    }
    return n;
  }

  private static GcPolicy rule(String path, ByteBuffer in, int depth) throws CorruptionException {
    int at = in.position();
    if (depth > MAX_RULE_DEPTH) {
      throw new CorruptionException(path, at, "GC rule nested deeper than " + MAX_RULE_DEPTH);
    }
    int kind = in.get() & 0xFF;
    switch (kind) {
      case 0:
        return GcPolicy.KEEP_ALL;
      case 1:
        return GcPolicy.maxVersions(VarInts.getVarInt(in));
      case 2:
        return GcPolicy.maxAgeMicros(VarInts.getVarLong(in));
      case 3:
      case 4: {
        int n = count(path, in);
        GcPolicy[] rules = new GcPolicy[n];
        for (int i = 0; i < n; i++) {
          rules[i] = rule(path, in, depth + 1);
        }
        return kind == 3 ? GcPolicy.union(rules) : GcPolicy.intersection(rules);
      }
      default:
        throw new CorruptionException(path, at, "unknown GC rule kind " + kind);
    }
  }
}
