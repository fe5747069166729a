package io.tabula.actors.master;

import com.esotericsoftware.kryo.Kryo;
import com.esotericsoftware.kryo.Serializer;
import com.esotericsoftware.kryo.io.Input;
import com.esotericsoftware.kryo.io.Output;
import com.esotericsoftware.kryo.serializers.RecordSerializer;
import io.tabula.persistence.schema.GcPolicy;
import io.tabula.persistence.schema.LocalityGroup;
import java.util.Map;

/**
 * Kryo's serializer for {@link TableInfo} (id 1066), which reads both of its forms
 * (docs/formats/master-journal.md):
 * <ul>
 *   <li>before tables had an access: the record {@link Before}, its components one after
 *       another as Kryo's record serializer writes them, the first being the table's name
 *       (never null, so its first byte is never 0);
 *   <li>since: a 0 byte (what Kryo writes for a null first component), the form's number
 *       ({@value #FORM}) as a varint, then the record {@link Since}.
 * </ul>
 * It writes the second. Events and snapshots that hold tables (a {@code TableCreated}, a
 * directory) keep their ids and read as they did. Stateless.
 */
public final class TableInfoBytes extends Serializer<TableInfo> {
  /** The number of the form written now; a later form takes the next. */
  static final int FORM = 2;
  private static final byte MARK = 0;

  /** A table as it was written before it had an access. */
  record Before(String name, Map<String, GcPolicy> families, long createdMicros, Map<String, LocalityGroup> groups,
      Map<String, String> familyGroups) {}

  /** A table as written since form 2. */
  record Since(String name, Map<String, GcPolicy> families, long createdMicros, Map<String, LocalityGroup> groups,
      Map<String, String> familyGroups, TableAccess access) {}

  private final RecordSerializer<Before> before = new RecordSerializer<>(Before.class);
  private final RecordSerializer<Since> since = new RecordSerializer<>(Since.class);

  public TableInfoBytes() {
    setImmutable(true);
  }

  @Override
  public void write(Kryo kryo, Output output, TableInfo t) {
    output.writeByte(MARK);
    output.writeVarInt(FORM, true);
    // TreeMaps, as the record's components are: their class is written with them
    since.write(kryo, output, new Since(t.name(), t.families(), t.createdMicros(), t.groups(), t.familyGroups(),
        t.access()));
  }

  @Override
  public TableInfo read(Kryo kryo, Input input, Class<? extends TableInfo> type) {
    int start = input.position();
    if (input.readByte() != MARK) {
      input.setPosition(start);
      Before b = before.read(kryo, input, Before.class);
      return new TableInfo(b.name(), b.families(), b.createdMicros(), b.groups(), b.familyGroups(), TableAccess.NONE);
    }
    int form = input.readVarInt(true);
    if (form != FORM) {
      throw new com.esotericsoftware.kryo.KryoException("a table in form " + form + ", newer than this version of"
          + " Tabula reads (" + FORM + ")");
    }
    Since s = since.read(kryo, input, Since.class);
    return new TableInfo(s.name(), s.families(), s.createdMicros(), s.groups(), s.familyGroups(), s.access());
  }
}
