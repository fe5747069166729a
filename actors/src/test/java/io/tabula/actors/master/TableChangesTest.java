package io.tabula.actors.master;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tabula.persistence.schema.GcPolicy;
import io.tabula.persistence.schema.LocalityGroup;
import io.tabula.persistence.schema.TableSchema;
import io.tabula.persistence.sstable.Compression;
import io.tabula.protocol.errors.ErrorCode;
import io.tabula.protocol.errors.Refused;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The master's locality-group changes: what they record, and what they refuse. */
class TableChangesTest {
  private static final TableInfo T = new TableInfo("t", Map.of("cf", GcPolicy.maxVersions(1)), 1);

  private static TableInfo set(TableInfo t, String group, Boolean inMemory, Compression c, String... families) {
    Master.LocalityGroupsChanged e = TableChanges.setLocalityGroup(t, new Master.SetLocalityGroup(t.name(), group,
        inMemory, c, List.of(families), null));
    return (TableInfo) DirectoryEvents.apply(Directory.EMPTY.withTable(t, List.of(TabletInfo.empty("t", "t-1",
        new byte[0], new byte[0])), 2), e).table("t");
  }

  private static ErrorCode refusal(Runnable r) {
    return assertThrows(Refused.class, r::run).refusal().code();
  }

  @Test
  void aNewGroupHoldsTheFamiliesCreatedInItAndKeepsSettingsNotGiven() {
    TableInfo t = set(T, "mem", true, Compression.LZ4, "hot", "warm");
    assertEquals(Map.of("hot", "mem", "warm", "mem"), t.familyGroups());
    assertEquals(GcPolicy.KEEP_ALL, t.families().get("hot"));
    assertEquals(GcPolicy.maxVersions(1), t.families().get("cf"), "other families are as they were");
    TableSchema s = t.schema();
    assertEquals("mem", s.groupOf("hot"));
    assertEquals(LocalityGroup.DEFAULT_NAME, s.groupOf("cf"));
    assertTrue(s.group("mem").inMemory());
    assertEquals(Compression.LZ4, s.group("mem").compression());

    TableInfo off = set(t, "mem", false, null, "hot");
    assertEquals(false, off.group("mem").inMemory());
    assertEquals(Compression.LZ4, off.group("mem").compression(), "compression not given is kept");
    assertEquals(t.familyGroups(), off.familyGroups());

    TableInfo def = set(t, LocalityGroup.DEFAULT_NAME, true, null, "cf", "new");
    assertTrue(def.schema().group(LocalityGroup.DEFAULT_NAME).inMemory(), "the default group may be held in memory");
    assertEquals(LocalityGroup.DEFAULT_NAME, def.groupOf("new"));
    assertEquals(t.familyGroups(), def.familyGroups(), "families of the default group are not listed");
  }

  @Test
  void aDroppedFamilyLeavesItsGroup() {
    TableInfo t = set(T, "mem", true, null, "hot");
    TableInfo dropped = t.withFamilies(Map.of("cf", GcPolicy.KEEP_ALL));
    assertEquals(Map.of(), dropped.familyGroups());
    assertTrue(dropped.group("mem").inMemory(), "the group stays, empty");
  }

  @Test
  void aFamilyInAnotherGroupAndTooManyGroupsAreRefused() {
    TableInfo t = set(T, "mem", true, null, "hot");
    assertEquals(ErrorCode.FAILED_PRECONDITION, refusal(() -> set(t, "mem", null, null, "cf")));
    assertEquals(ErrorCode.FAILED_PRECONDITION, refusal(() -> set(t, "other", null, null, "hot")));
    assertEquals(ErrorCode.FAILED_PRECONDITION, refusal(() -> set(t, LocalityGroup.DEFAULT_NAME, null, null, "hot")));
    TableInfo many = T;
    for (int i = 1; i < TableChanges.MAX_GROUPS; i++) {
      many = set(many, "g" + i, null, null);
    }
    TableInfo full = many;
    assertEquals(TableChanges.MAX_GROUPS - 1, full.groups().size());
    assertEquals(ErrorCode.RESOURCE_EXHAUSTED, refusal(() -> set(full, "one-more", null, null)));
    assertEquals(true, set(full, "g3", true, null).group("g3").inMemory(), "an existing group still changes");
  }
}
