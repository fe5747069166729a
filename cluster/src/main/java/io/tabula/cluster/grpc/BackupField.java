package io.tabula.cluster.grpc;

import com.google.bigtable.admin.v2.Backup;
import com.google.protobuf.Timestamp;
import java.util.Comparator;
import java.util.Optional;

/**
 * A field of a {@link Backup} that ListBackups filters and sorts on, by its name in the
 * request ({@code name}, {@code source_table}, {@code state}, {@code start_time},
 * {@code end_time}, {@code expire_time}, {@code size_bytes}; matched without regard to case),
 * with how it is read, whether it is set, and how it sorts. An enum: thread-safe.
 */
enum BackupField {
  NAME("name", Kind.TEXT),
  SOURCE_TABLE("source_table", Kind.TEXT),
  STATE("state", Kind.STATE),
  START_TIME("start_time", Kind.TIME),
  END_TIME("end_time", Kind.TIME),
  EXPIRE_TIME("expire_time", Kind.TIME),
  SIZE_BYTES("size_bytes", Kind.NUMBER);

  /** What a field holds, which decides the values a filter may compare it with. */
  enum Kind {
    /** A resource name: compared as text, without regard to case. */
    TEXT,
    /** {@link Backup.State}: compared by the enum's names, ordered by its numbers. */
    STATE,
    /** A {@link Timestamp}, possibly unset: compared as instants. */
    TIME,
    /** An int64. */
    NUMBER
  }

  private final String wireName;
  private final Kind kind;

  BackupField(String wireName, Kind kind) {
    this.wireName = wireName;
    this.kind = kind;
  }

  /** The field's name in a request, in lower case. */
  String wireName() {
    return wireName;
  }

  Kind kind() {
    return kind;
  }

  /** The field named {@code name} (any case), if there is one. */
  static Optional<BackupField> named(String name) {
    for (BackupField f : values()) {
      if (f.wireName.equalsIgnoreCase(name)) {
        return Optional.of(f);
      }
    }
    return Optional.empty();
  }

  /** The names of all fields, for messages: {@code "name, source_table, ..."}. */
  static String names() {
    StringBuilder out = new StringBuilder();
    for (BackupField f : values()) {
      out.append(out.isEmpty() ? "" : ", ").append(f.wireName);
    }
    return out.toString();
  }

  /** The text of a {@link Kind#TEXT} field, as stored (case kept). */
  String text(Backup b) {
    return switch (this) {
      case NAME -> b.getName();
      case SOURCE_TABLE -> b.getSourceTable();
      default -> throw new IllegalArgumentException(this + " is not a text field");
    };
  }

  /** The timestamp of a {@link Kind#TIME} field; meaningful only when {@link #present}. */
  Timestamp time(Backup b) {
    return switch (this) {
      case START_TIME -> b.getStartTime();
      case END_TIME -> b.getEndTime();
      case EXPIRE_TIME -> b.getExpireTime();
      default -> throw new IllegalArgumentException(this + " is not a time field");
    };
  }

  /**
   * Whether {@code b} has a value for this field: a timestamp that is set, other fields a value
   * other than their default (AIP-160's meaning of {@code field:*}).
   */
  boolean present(Backup b) {
    return switch (this) {
      case NAME, SOURCE_TABLE -> !text(b).isEmpty();
      case STATE -> b.getStateValue() != Backup.State.STATE_UNSPECIFIED_VALUE;
      case START_TIME -> b.hasStartTime();
      case END_TIME -> b.hasEndTime();
      case EXPIRE_TIME -> b.hasExpireTime();
      case SIZE_BYTES -> b.getSizeBytes() != 0;
    };
  }

  /**
   * The field's ascending order: names by their characters (case counts, so the order is
   * total), states by their numbers, sizes by value, timestamps by instant with an unset one
   * before every set one.
   */
  Comparator<Backup> ascending() {
    return switch (kind) {
      case TEXT -> Comparator.comparing(this::text);
      case STATE -> Comparator.comparingInt(Backup::getStateValue);
      case NUMBER -> Comparator.comparingLong(Backup::getSizeBytes);
      case TIME -> (x, y) -> {
        boolean hx = present(x);
        boolean hy = present(y);
        if (hx != hy) {
          return hx ? 1 : -1;
        }
        return hx ? compare(time(x), time(y).getSeconds(), time(y).getNanos()) : 0;
      };
    };
  }

  /** {@code t} against the instant {@code seconds}, {@code nanos} (no conversion, so no range to exceed). */
  static int compare(Timestamp t, long seconds, int nanos) {
    int c = Long.compare(t.getSeconds(), seconds);
    return c != 0 ? c : Integer.compare(t.getNanos(), nanos);
  }

  @Override
  public String toString() {
    return wireName;
  }
}
