package io.tabula.persistence.compaction;

/**
 * How long a tablet remembers a row mutation's idempotency token (Cloud Bigtable's {@code
 * Idempotency}): a retry of the row mutation within this time of its first write is not
 * applied again; compactions drop tokens older than this. A request whose first attempt
 * began longer ago than this is refused by the node rather than risk applying twice
 * (docs/aggregates.md, "Idempotency").
 */
public final class TabletTokensWindow {
  private TabletTokensWindow() {}

  /** Ten minutes, in microseconds. */
  public static final long MICROS = 10L * 60 * 1_000_000;
}
