package io.tabula.client.cli;

import io.tabula.client.BackupDescription;
import io.tabula.client.TabulaClient;
import java.time.Duration;
import java.util.List;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;

/**
 * The backup commands, as cbt's (docs/backups.md): createbackup, copybackup, listbackups, updatebackup,
 * deletebackup, restore. Backups live under the instance's one cluster.
 */
final class BackupCommands {
  private BackupCommands() {}

  @Command(name = "createbackup", mixinStandardHelpOptions = true,
      description = {"Backs a table up: every write acknowledged before it began is in it. No data is copied.",
          "  tabula createbackup nightly webtable 7d"})
  static final class CreateBackup extends ClientCommand {
    @Parameters(index = "0", paramLabel = "BACKUP", description = "The backup's id.")
    String backup;

    @Parameters(index = "1", paramLabel = "TABLE", description = "The table to back up.")
    String table;

    @Parameters(index = "2", paramLabel = "TTL", description = "How long to keep it: 6h to 90d (as 72h or 7d).")
    String ttl;

    private Duration keep;

    @Override
    void check() {
      keep = TimeArgs.duration(this, "ttl", ttl);
    }

    @Override
    int run(TabulaClient client) {
      print(this, List.of(Blocking.join(client.admin().createBackup(table, backup, keep))));
      return 0;
    }
  }

  @Command(name = "copybackup", mixinStandardHelpOptions = true,
      description = {"Copies a backup: within this instance by naming the same files; from another instance's",
          "storage root (the nodes' tabula.backup.copy-sources) by copying every file, checked by CRC32C.",
          "  tabula copybackup nightly nightly-kept 30d",
          "  tabula copybackup --source-instance=other nightly nightly-from-other 7d"})
  static final class CopyBackup extends ClientCommand {
    @Parameters(index = "0", paramLabel = "SOURCE", description = "The id of the backup to copy.")
    String source;

    @Parameters(index = "1", paramLabel = "BACKUP", description = "The copy's id.")
    String backup;

    @Parameters(index = "2", paramLabel = "TTL", description = "How long to keep it: 6h to 90d from when the"
        + " source began (as 72h or 7d).")
    String ttl;

    @picocli.CommandLine.Option(names = "--source-instance", paramLabel = "ID",
        description = "The source's instance, when it is not this one.")
    String sourceInstance;

    @picocli.CommandLine.Option(names = "--source-cluster", paramLabel = "ID",
        description = "The source instance's cluster (default: tabula).")
    String sourceCluster;

    private Duration keep;

    @Override
    void check() {
      keep = TimeArgs.duration(this, "ttl", ttl);
    }

    @Override
    int run(TabulaClient client) {
      print(this, List.of(Blocking.join(client.admin().copyBackup(sourceInstance, sourceCluster, source, backup,
          keep))));
      return 0;
    }
  }

  @Command(name = "listbackups", mixinStandardHelpOptions = true, description = "Lists the backups, newest first.")
  static final class ListBackups extends ClientCommand {
    @Override
    int run(TabulaClient client) {
      print(this, Blocking.join(client.admin().listBackups()));
      return 0;
    }
  }

  @Command(name = "updatebackup", mixinStandardHelpOptions = true,
      description = {"Keeps a backup until a new time from now.", "  tabula updatebackup nightly 30d"})
  static final class UpdateBackup extends ClientCommand {
    @Parameters(index = "0", paramLabel = "BACKUP", description = "The backup's id.")
    String backup;

    @Parameters(index = "1", paramLabel = "TTL", description = "How long to keep it from now (as 72h or 7d).")
    String ttl;

    private Duration keep;

    @Override
    void check() {
      keep = TimeArgs.duration(this, "ttl", ttl);
    }

    @Override
    int run(TabulaClient client) {
      print(this, List.of(Blocking.join(client.admin().updateBackup(backup, keep))));
      return 0;
    }
  }

  @Command(name = "deletebackup", mixinStandardHelpOptions = true, description = "Deletes a backup.")
  static final class DeleteBackup extends ClientCommand {
    @Parameters(index = "0", paramLabel = "BACKUP", description = "The backup's id.")
    String backup;

    @Override
    int run(TabulaClient client) {
      Blocking.join(client.admin().deleteBackup(backup));
      return 0;
    }
  }

  @Command(name = "restore", mixinStandardHelpOptions = true,
      description = {"Makes a new table from a backup; it serves at once.", "  tabula restore webtable-copy nightly"})
  static final class Restore extends ClientCommand {
    @Parameters(index = "0", paramLabel = "TABLE", description = "The new table's id.")
    String table;

    @Parameters(index = "1", paramLabel = "BACKUP", description = "The backup's id.")
    String backup;

    @Override
    int run(TabulaClient client) {
      Blocking.join(client.admin().restore(table, backup));
      return 0;
    }
  }

  private static void print(ClientCommand c, List<BackupDescription> backups) {
    TextTable.print(c.out(), List.of("Name", "From Table", "Expire Time", "Start Time", "End Time", "Size", "State"),
        backups.stream().map(b -> List.of(b.backupId(), b.sourceTable(), b.expire().toString(), b.start().toString(),
            b.end().toString(), Long.toString(b.sizeBytes()), b.state())).toList());
  }
}
