package io.tabula.cluster;

import io.tabula.actors.postgres.PostgresSchema;
import picocli.CommandLine.Command;

/**
 * {@code tabula postgres-schema}: prints the SQL that creates Tabula's tables in PostgreSQL
 * (the master's journal, the leases, the journal's fence), for a DBA who creates schemas by
 * hand. A node runs the same SQL at start, so this is never required.
 */
@Command(name = "postgres-schema", mixinStandardHelpOptions = true,
    description = {"Prints the SQL that creates Tabula's PostgreSQL tables (journal, leases, fence).",
        "A node creates them itself at start; this is for creating them by hand:",
        "  bin/tabula postgres-schema | psql -v ON_ERROR_STOP=1 -d tabula"})
public final class PostgresSchemaCommand implements Runnable {
  @Override
  public void run() {
    System.out.print(PostgresSchema.sql());
    System.out.flush();
  }
}
