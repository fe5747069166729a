package io.tabula.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tabula.actors.master.Directory;
import io.tabula.actors.master.TableInfo;
import io.tabula.actors.master.TabletInfo;
import io.tabula.persistence.schema.GcPolicy;
import io.tabula.persistence.schema.TableSchema;
import io.tabula.persistence.storage.FileStorage;
import io.tabula.persistence.tablet.MicrosClock;
import io.tabula.persistence.tablet.Tablet;
import io.tabula.persistence.tablet.TabletOptions;
import io.tabula.persistence.tablet.TabletServer;
import io.tabula.persistence.wal.CommitLogOptions;
import io.tabula.persistence.wal.Durability;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A change of a table's families reaches every tablet of it open on the node (a real engine on real files). */
class SchemaUpdateTest {
  @TempDir
  Path dir;

  @Test
  void aTabletOpenHereThatTheCopyDoesNotShowYetGetsItsTablesNewSchema() throws Exception {
    TabletServer engine = TabletServer.open(new FileStorage(dir), new TabletServer.Options("n1", 1 << 20, 1,
        new CommitLogOptions(1 << 20, Durability.OS_BUFFERED), TabletOptions.defaults()), MicrosClock.SYSTEM,
        table -> TableSchema.of());
    try {
      Tablet known = engine.createTablet("t", "t-1", new byte[0], "m".getBytes());
      Tablet opening = engine.createTablet("t", "t-2", "m".getBytes(), new byte[0]); // a split's half, say
      Directory copy = new Directory(7, 3, Map.of("t", new TableInfo("t", Map.of("f", GcPolicy.KEEP_ALL), 0)),
          Map.of("t", List.of(TabletInfo.empty("t", "t-1", new byte[0], "m".getBytes()))), Map.of());
      TabulaNode.updateSchemas(engine, copy);
      assertEquals(Set.of("f"), known.schema().families().keySet());
      assertEquals(Set.of("f"), opening.schema().families().keySet(), "by its own table, not by its entry in the copy");
      assertTrue(copy.tablet("t-2") == null, "the copy does not show it");
    } finally {
      engine.close();
    }
  }
}
