package io.tabula.client;

import com.google.protobuf.ByteString;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * A row as read: its key and its cells ordered by family, then qualifier, then newest
 * timestamp first (the order Bigtable returns them in). Immutable.
 */
public record Row(ByteString key, List<Cell> cells) {
  public Row {
    Objects.requireNonNull(key, "key");
    cells = List.copyOf(cells);
  }

  public String keyUtf8() {
    return key.toStringUtf8();
  }

  /** Every version of one column, newest first. */
  public List<Cell> cells(String family, String qualifier) {
    ByteString q = ByteString.copyFromUtf8(qualifier);
    List<Cell> out = new ArrayList<>();
    for (Cell c : cells) {
      if (c.family().equals(family) && c.qualifier().equals(q)) {
        out.add(c);
      }
    }
    return out;
  }

  /** The newest version of one column, if the row has it. */
  public Optional<Cell> latest(String family, String qualifier) {
    List<Cell> versions = cells(family, qualifier);
    return versions.isEmpty() ? Optional.empty() : Optional.of(versions.get(0));
  }
}
