package io.tabula.persistence.tablet;

import java.io.IOException;

/**
 * A tablet that held data has no manifest on this storage root, so it is not opened (and not
 * created empty in its place, which would serve it without its rows). Its files are not
 * where this node looks: the root is not the one its cluster shares, or the tablet's folder
 * was deleted.
 */
public final class TabletMissingException extends IOException {
  private static final long serialVersionUID = 1L;

  /**
   * @param dir the tablet's folder under the root
   * @param root the storage root as its operator named it (a path or a URI)
   */
  public TabletMissingException(String table, String tabletId, String dir, String root) {
    super("tablet " + tabletId + " of table " + table + " has no manifest in " + dir + " on the storage root "
        + root + ", but it held data (the master's directory records its files or names a log that may hold its "
        + "writes): it is not created empty. Is " + root + " the storage root every node of the cluster shares? "
        + "(docs/deploy.md, \"One shared storage root\")");
  }
}
