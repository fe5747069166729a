package io.tabula.persistence.tablet;

import java.io.IOException;

/**
 * A manifest change lost the race for its version: another writer published that version
 * first, and the link that would have published this one was refused. For a tablet's owner
 * this means a newer owner has opened the tablet (it claims a version as it opens), so the
 * change was not made and the tablet is no longer this node's. Nothing was published, so no
 * manifest names the files written for the change: its writer deletes them. Compare
 * {@link ManifestMaybeAdoptedException}, where the change may have been published.
 */
public final class ManifestConflictException extends IOException {
  private static final long serialVersionUID = 1L;

  public ManifestConflictException(String dir, long version) {
    super("manifest version " + version + " in " + dir + " was published by another writer first: the tablet has a "
        + "newer owner");
  }
}
