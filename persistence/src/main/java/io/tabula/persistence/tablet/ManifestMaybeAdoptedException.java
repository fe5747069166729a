package io.tabula.persistence.tablet;

import java.io.IOException;

/**
 * A manifest change whose version may be the tablet's manifest now: it was published and then
 * found superseded ({@link ManifestSupersededException}), or an I/O error came at or after the
 * link that publishes it, so whether it was published is unknown
 * ({@link ManifestOutcomeUnknownException}). A new owner's claim may have adopted it, so its
 * writer deletes none of the files written for the change and marks nothing obsolete: what no
 * manifest names is the master's sweep's to delete ({@link FileSweeper}). Compare
 * {@link ManifestConflictException}: nothing was published, and the files are garbage.
 */
public abstract sealed class ManifestMaybeAdoptedException extends IOException
    permits ManifestSupersededException, ManifestOutcomeUnknownException {
  private static final long serialVersionUID = 1L;

  ManifestMaybeAdoptedException(String message, Throwable cause) {
    super(message, cause);
  }
}
