package io.tabula.actors.master;

import com.esotericsoftware.kryo.Kryo;
import com.esotericsoftware.kryo.Serializer;
import com.esotericsoftware.kryo.io.Input;
import com.esotericsoftware.kryo.io.Output;
import com.esotericsoftware.kryo.serializers.RecordSerializer;
import io.tabula.persistence.schema.Aggregator;
import io.tabula.persistence.schema.GcPolicy;
import io.tabula.persistence.schema.LocalityGroup;
import java.util.Map;

/**
 * Kryo's serializer for {@link TableInfo} (id 1066), which reads both of its forms
 * (docs/formats/master-journal.md):
 * <ul>
 *   <li>before tables had an access: the record {@link Before}, its components one after
 *       another as Kryo's record serializer writes them (sorted by name: the first is {@code
 *       createdMicros}, a zigzag varlong, then {@code families}, a map written with its class);
 *   <li>form 2, once tables had an access: a 0 byte, the form's number (2) as a varint, then
 *       the record {@link Since};
 *   <li>form 3, once they had options: a 0 byte, the form's number (3) as a varint, then the
 *       record {@link WithOptions};
 *   <li>form 4, once families could be aggregate families: a 0 byte, the form's number
 *       ({@value #FORM}) as a varint, then the record {@link WithAggregates}.
 * </ul>
 * A table written before starts with 0 only when it was created at time 0, and its next byte
 * is then a map's class id plus 2 (Kryo's registered classes other than {@code int} have ids
 * of 1 and up, maps far above), never 2, 3 or 4: the forms are told apart by their first two
 * values. Reading needs an {@link Input} that can go back to where the table began (the
 * journal and snapshots read from arrays).
 * It writes the last. Events and snapshots that hold tables (a {@code TableCreated}, a
 * directory) keep their ids and read as they did. Stateless.
 */
public final class TableInfoBytes extends Serializer<TableInfo> {
  /** The number of the form written now; a later form takes the next. */
  static final int FORM = 4;
  private static final int FORM_WITH_OPTIONS = 3;
  private static final int FORM_WITH_ACCESS = 2;
  private static final byte MARK = 0;

  /** A table as it was written before it had an access. */
  record Before(String name, Map<String, GcPolicy> families, long createdMicros, Map<String, LocalityGroup> groups,
      Map<String, String> familyGroups) {}

  /** A table as written in form 2. */
  record Since(String name, Map<String, GcPolicy> families, long createdMicros, Map<String, LocalityGroup> groups,
      Map<String, String> familyGroups, TableAccess access) {}

  /** A table as written in form 3. */
  record WithOptions(String name, Map<String, GcPolicy> families, long createdMicros,
      Map<String, LocalityGroup> groups, Map<String, String> familyGroups, TableAccess access, TableOptions options) {}

  /** A table as written since form 4: its aggregate families' aggregators after the rest. */
  record WithAggregates(String name, Map<String, GcPolicy> families, long createdMicros,
      Map<String, LocalityGroup> groups, Map<String, String> familyGroups, TableAccess access, TableOptions options,
      Map<String, Aggregator> aggregates) {}

  private final RecordSerializer<Before> before = new RecordSerializer<>(Before.class);
  private final RecordSerializer<Since> since = new RecordSerializer<>(Since.class);
  private final RecordSerializer<WithOptions> withOptions = new RecordSerializer<>(WithOptions.class);
  private final RecordSerializer<WithAggregates> withAggregates = new RecordSerializer<>(WithAggregates.class);

  public TableInfoBytes() {
    setImmutable(true);
  }

  @Override
  public void write(Kryo kryo, Output output, TableInfo t) {
    output.writeByte(MARK);
    output.writeVarInt(FORM, true);
    // TreeMaps, as the record's components are: their class is written with them
    withAggregates.write(kryo, output, new WithAggregates(t.name(), t.families(), t.createdMicros(), t.groups(),
        t.familyGroups(), t.access(), t.options(), t.aggregates()));
  }

  @Override
  public TableInfo read(Kryo kryo, Input input, Class<? extends TableInfo> type) {
    int start = input.position();
    int form = input.readByte() == MARK ? input.readVarInt(true) : -1;
    if (form == FORM) {
      WithAggregates w = withAggregates.read(kryo, input, WithAggregates.class);
      return new TableInfo(w.name(), w.families(), w.createdMicros(), w.groups(), w.familyGroups(), w.access(),
          w.options(), w.aggregates());
    }
    if (form == FORM_WITH_OPTIONS) {
      WithOptions w = withOptions.read(kryo, input, WithOptions.class);
      return new TableInfo(w.name(), w.families(), w.createdMicros(), w.groups(), w.familyGroups(), w.access(),
          w.options());
    }
    if (form == FORM_WITH_ACCESS) {
      Since s = since.read(kryo, input, Since.class);
      return new TableInfo(s.name(), s.families(), s.createdMicros(), s.groups(), s.familyGroups(), s.access(),
          TableOptions.NONE);
    }
    // Written before: its first component (createdMicros, a zigzag varlong) may be 0 too, but what follows it
    // then is a map's class, whose id is never a form's.
    input.setPosition(start);
    Before b = before.read(kryo, input, Before.class);
    return new TableInfo(b.name(), b.families(), b.createdMicros(), b.groups(), b.familyGroups(), TableAccess.NONE,
        TableOptions.NONE);
  }
}
