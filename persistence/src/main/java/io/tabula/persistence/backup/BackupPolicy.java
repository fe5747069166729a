package io.tabula.persistence.backup;

import io.tabula.persistence.encoding.ByteSink;
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
import java.util.zip.CRC32C;

/**
 * A backup's IAM policy (Cloud Bigtable's {@code SetIamPolicy} on a backup): members by role,
 * roles and members in the order they were set. Kept beside the backup's manifest, as its
 * expiry is ({@link BackupExpiry}), in versioned files {@code backups/<id>/POLICY-NNNNNNNNNN}:
 * a change writes the next version exclusively (two changes at once: one fails, and is refused
 * as made against an older policy), then deletes the older ones. A backup without a policy
 * file has version 0 and no bindings. Deleting the backup deletes its folder, policy files
 * included. Format: docs/formats/backup-manifest.md ("Policy"). Immutable.
 *
 * @param bindings members by role; roles and members are checked by whoever sets them
 */
public record BackupPolicy(Map<String, List<String>> bindings) {
  /** "TBLABPOL". */
  static final long MAGIC = 0x54424C4142504F4CL;
  static final int VERSION = 1;
  static final int HEADER_BYTES = 8 + 4 + 4 + 4;
  /** The largest body read: a policy of 1,000 bindings of 1,000 members is far less. */
  static final int MAX_BODY_BYTES = 16 << 20;
  static final String PREFIX = "POLICY-";
  /** The policy of a backup nobody has set one on. */
  public static final BackupPolicy NONE = new BackupPolicy(Map.of());

  public BackupPolicy {
    Map<String, List<String>> copy = new LinkedHashMap<>();
    bindings.forEach((role, members) -> copy.put(role, List.copyOf(members)));
    bindings = java.util.Collections.unmodifiableMap(copy);
  }

  /** A version of backup {@code id}'s policy and what it says; version 0: none was ever set. */
  public record Versioned(long version, BackupPolicy policy) {}

  /**
   * Writes {@code p} as version {@code version} of backup {@code id}'s policy; false if that
   * version exists (someone else changed it first). Older versions are deleted after.
   */
  public static boolean write(Storage storage, String id, long version, BackupPolicy p) throws IOException {
    if (version < 1) {
      throw new IllegalArgumentException("a policy's first version is 1, was " + version);
    }
    return VersionedFiles.write(storage, id, PREFIX, version, p.encode());
  }

  /** The newest version of backup {@code id}'s policy; version 0 and no bindings when none was set. */
  public static Versioned read(Storage storage, String id) throws IOException {
    return read(storage, id, storage.list(BackupManifestCodec.folder(id)));
  }

  /** As {@link #read(Storage, String)}, given the names in the backup's folder (one listing serves both). */
  public static Versioned read(Storage storage, String id, List<String> names) throws IOException {
    long newest = VersionedFiles.newest(PREFIX, names);
    if (newest <= 0) {
      return new Versioned(0, NONE);
    }
    String p = path(id, newest);
    byte[] b;
    try (ReadableFile r = storage.open(p)) {
      if (r.size() < HEADER_BYTES || r.size() > HEADER_BYTES + (long) MAX_BODY_BYTES) {
        throw new CorruptionException(p, 0, "file of " + r.size() + " bytes cannot be a backup policy");
      }
      b = r.readFully(0, (int) r.size());
    }
    return new Versioned(newest, decode(p, b));
  }

  static String path(String id, long version) {
    return VersionedFiles.path(id, PREFIX, version);
  }

  /** The version a policy file's name gives; -1 for any other name. */
  static long versionOf(String name) {
    return VersionedFiles.versionOf(PREFIX, name);
  }

  byte[] encode() {
    ByteSink body = new ByteSink(256);
    body.putVar(bindings.size());
    bindings.forEach((role, members) -> {
      body.putString(role).putVar(members.size());
      members.forEach(body::putString);
    });
    byte[] b = body.toArray();
    CRC32C crc = new CRC32C();
    crc.update(b);
    ByteBuffer out = ByteBuffer.allocate(HEADER_BYTES + b.length);
    out.putLong(MAGIC).putInt(VERSION).putInt(b.length).putInt((int) crc.getValue()).put(b);
    return out.array();
  }

  static BackupPolicy decode(String path, byte[] file) throws CorruptionException {
    ByteBuffer in = BackupManifestCodec.framed(path, file, MAGIC, "backup policy", v -> v == VERSION);
    try {
      int roles = count(path, in);
      Map<String, List<String>> bindings = new LinkedHashMap<>();
      for (int r = 0; r < roles; r++) {
        String role = ByteSink.readString(in);
        int n = count(path, in);
        List<String> members = new ArrayList<>();
        for (int m = 0; m < n; m++) {
          members.add(ByteSink.readString(in));
        }
        bindings.put(role, members);
      }
      if (in.hasRemaining()) {
        throw new CorruptionException(path, in.position(), in.remaining() + " unexpected bytes after the body");
      }
      return new BackupPolicy(bindings);
    } catch (BufferUnderflowException | IllegalArgumentException | NegativeArraySizeException e) {
      throw new CorruptionException(path, in.position(), "malformed body: " + e.getMessage());
    }
  }

  /** A count, which cannot exceed the bytes left (every counted item takes at least one). */
  private static int count(String path, ByteBuffer in) throws CorruptionException {
    int at = in.position();
    int n = io.tabula.persistence.encoding.VarInts.getVarInt(in);
    if (n < 0 || n > in.remaining()) {
      throw new CorruptionException(path, at, "count " + n + " is more than the " + in.remaining() + " bytes left");
    }
    return n;
  }
}
