package io.tabula.cluster;

/**
 * The cluster refused this node at join: a member found its configuration incompatible
 * (Pekko's join-time configuration check; Tabula's part of it compares the storage roots,
 * {@link StorageRootCheck}). The node is not a member and stops: {@link TabulaNode#start} and
 * {@link TabulaNode#embed} throw this, and the {@code server} command exits with its message.
 */
public final class ClusterJoinRefusedException extends IllegalStateException {
  private static final long serialVersionUID = 1L;

  ClusterJoinRefusedException(String message) {
    super(message);
  }
}
