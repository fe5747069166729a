package io.tabula.streams.filter;

/**
 * A {@code RowFilter} refused at compilation because of its content. {@link #field()} names the
 * offending field as a proto path from the request field that carried the filter, for example
 * {@code filter.chain.filters[1].column_qualifier_regex_filter}, so the gRPC layer can answer
 * INVALID_ARGUMENT with it; the message is that path followed by the problem.
 *
 * <p>Thrown only by {@link RowFilters#compile}; evaluating a compiled filter never throws it.
 */
public final class InvalidFilterException extends IllegalArgumentException {
  private static final long serialVersionUID = 1L;
  private final String field;
  private final String problem;

  public InvalidFilterException(String field, String problem) {
    super(field + ": " + problem);
    this.field = field;
    this.problem = problem;
  }

  /**
   * The same refusal for the filter as the client sent it in request field {@code root} (say
   * {@code predicate_filter}), where it was compiled under another root name.
   */
  public InvalidFilterException sentAs(String root) {
    return new InvalidFilterException(rerooted(field, root), problem);
  }

  /** {@code field} with its first path element replaced by {@code root}. */
  static String rerooted(String field, String root) {
    int dot = field.indexOf('.');
    return dot < 0 ? root : root + field.substring(dot);
  }

  /** The proto-style path of the offending field. */
  public String field() {
    return field;
  }

  /** What is wrong with it, without the path. */
  public String problem() {
    return problem;
  }
}
