package io.tabula.persistence.tablet;

/**
 * A manifest version was published, and the listing right after found a newer one. Either a
 * new owner claimed the tablet after the publish (its claim adopted this version, and its
 * manifest names what this one names), or this writer was far behind and published a number
 * freed by the deletion of older versions (no reader takes it). The writer cannot tell which,
 * so it deletes nothing the change wrote; the tablet has a newer owner either way.
 */
public final class ManifestSupersededException extends ManifestMaybeAdoptedException {
  private static final long serialVersionUID = 1L;

  public ManifestSupersededException(String dir, long version, long newest) {
    super("manifest version " + version + " in " + dir + " was published, then found superseded by version " + newest
        + ": the tablet has a newer owner, which may have adopted it", null);
  }
}
