package io.tabula.persistence.tablet;

/**
 * The tablet cannot take the request: it is closed, or it is being split (the caller
 * retries at the tablet that now serves the row), or the row is outside its range.
 */
public final class TabletUnavailableException extends IllegalStateException {
  private static final long serialVersionUID = 1L;

  public TabletUnavailableException(String message) {
    super(message);
  }
}
