package io.tabula.streams.filter;

/**
 * A regular expression of a filter took longer than a node allows to match one subject (a row
 * key, a qualifier or a value). re2j's matching time grows with the program's size times the
 * subject's length and cannot be stopped from outside, so the match watches its own time and
 * gives up: the request fails with RESOURCE_EXHAUSTED naming the field, rather than holding a
 * thread for hours over one large value. {@link #field()} is the filter field's path, as in
 * {@link InvalidFilterException}.
 *
 * <p>Thrown while a compiled filter is evaluated, only by its regex filters. No stack trace:
 * it is the request's cost, not the node's fault.
 */
public final class FilterTooSlowException extends RuntimeException {
  private static final long serialVersionUID = 1L;
  private final String field;
  private final String problem;

  public FilterTooSlowException(String field, String problem) {
    super(field + ": " + problem, null, false, false);
    this.field = field;
    this.problem = problem;
  }

  /**
   * The same failure for the filter as the client sent it in request field {@code root}
   * (say {@code predicate_filter}) where it was compiled under another root name.
   */
  public FilterTooSlowException sentAs(String root) {
    return new FilterTooSlowException(InvalidFilterException.rerooted(field, root), problem);
  }

  /** The proto-style path of the regex filter that was too slow. */
  public String field() {
    return field;
  }
}
