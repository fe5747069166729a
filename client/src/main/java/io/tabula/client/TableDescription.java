package io.tabula.client;

import java.util.Map;
import java.util.TreeMap;

/** A table as the admin API describes it: its id and its column families with their GC policies. Immutable. */
public record TableDescription(String tableId, Map<String, GcPolicy> families) {
  public TableDescription {
    families = java.util.Collections.unmodifiableMap(new TreeMap<>(families));
  }
}
