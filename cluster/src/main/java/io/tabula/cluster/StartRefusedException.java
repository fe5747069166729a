package io.tabula.cluster;

/**
 * A node refused to start because its settings or its deployment break an assumption that
 * Tabula's safety argument rests on (docs/deploy.md, docs/fencing.md). {@link #reason} says
 * which, for code; the message says why and what to do, for people. Thrown by {@link
 * TabulaNode#start} and {@link TabulaNode#embed} before the node serves anything.
 */
public final class StartRefusedException extends IllegalStateException {
  private static final long serialVersionUID = 1L;

  /** The assumption a refused start would have broken. */
  public enum Reason {
    /**
     * The master's journal is not one of Tabula's, or the actor system's default journal or
     * snapshot store is one of the master's: a persistent actor recovering through it would
     * open the master's journal as a new epoch and fence the running master.
     */
    MASTER_JOURNAL,
    /**
     * The master's journal has no fence (pekko-persistence-jdbc on a database other than
     * PostgreSQL) and the node can be in a cluster: only the lease would keep two masters
     * from writing at once.
     */
    UNFENCED_JOURNAL,
    /**
     * The HDFS client may read from observer namenodes, which can lag: a fence written through
     * the active namenode could go unseen.
     */
    HDFS_OBSERVER_READS,
    /**
     * The storage root is on an NFS mount without the version and options Tabula's file
     * operations need across machines.
     */
    UNSAFE_NFS,
    /**
     * The node would listen on an address other than loopback without TLS or without
     * authentication, and was not told {@code --insecure} ({@code tabula.node.insecure}).
     */
    EXPOSED
  }

  private final Reason reason;

  StartRefusedException(Reason reason, String message) {
    super(message);
    this.reason = reason;
  }

  /** Which assumption the start would have broken. */
  public Reason reason() {
    return reason;
  }
}
