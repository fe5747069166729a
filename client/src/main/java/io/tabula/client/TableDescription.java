package io.tabula.client;

import java.util.Map;
import java.util.TreeMap;

/**
 * A table as the admin API describes it: its id, its column families with their GC policies,
 * and the aggregate families' {@link Aggregate}s (a family not in {@code aggregates} holds raw
 * values). Immutable.
 */
public record TableDescription(String tableId, Map<String, GcPolicy> families, Map<String, Aggregate> aggregates) {
  public TableDescription {
    families = java.util.Collections.unmodifiableMap(new TreeMap<>(families));
    aggregates = java.util.Collections.unmodifiableMap(new TreeMap<>(aggregates));
  }

  /** A table with no aggregate family. */
  public TableDescription(String tableId, Map<String, GcPolicy> families) {
    this(tableId, families, Map.of());
  }
}
