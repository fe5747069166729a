package io.tabula.persistence.tablet;

/**
 * Publishing a manifest version failed at or after the link that publishes it (the link
 * itself, the folder's sync, the listing after it): the version may or may not be published,
 * and if it is, it may be the newest, which the tablet's next owner adopts. Its writer deletes
 * nothing the change wrote, and holds on to the version it had before; its next change asks
 * for the same version again, which is refused if this one was published.
 */
public final class ManifestOutcomeUnknownException extends ManifestMaybeAdoptedException {
  private static final long serialVersionUID = 1L;

  public ManifestOutcomeUnknownException(String dir, long version, Throwable cause) {
    super("publishing manifest version " + version + " in " + dir + " failed at or after its link, so whether it was "
        + "published is unknown: " + cause, cause);
  }
}
