package io.tabula.persistence.storage;

import java.io.IOException;
import java.util.UUID;

/**
 * The storage root is not the one this node started on, which every node of its cluster
 * shares: its identity ({@link RootIdentity}) is another, or it has none. What was to be done
 * on it (open a tablet, fence a node's logs) is not done: on another root a tablet's files
 * and a node's logs are simply absent, and acting on that absence loses data silently.
 */
public final class RootMismatchException extends IOException {
  private static final long serialVersionUID = 1L;
  private final UUID expected;
  private final UUID found;

  /**
   * @param refused what was not done, such as "tablet t1 is not opened"
   * @param root the root as its operator named it (a path or a URI)
   * @param found the identity the root has now; null if it has none
   */
  public RootMismatchException(String refused, String root, UUID expected, UUID found) {
    super(refused + ": the storage root " + root + " has " + (found == null ? "no identity (no "
        + RootIdentity.FILE + " file)" : "the identity " + found) + ", not " + expected + ", the identity of the "
        + "root this node started on, which its cluster shares. Every node of a cluster must see one shared "
        + "storage root (docs/deploy.md, \"One shared storage root\")");
    this.expected = expected;
    this.found = found;
  }

  /** The identity of the root this node started on. */
  public UUID expected() {
    return expected;
  }

  /** The identity the root has now; null if it has none. */
  public UUID found() {
    return found;
  }
}
