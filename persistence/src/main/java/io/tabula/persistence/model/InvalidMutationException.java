package io.tabula.persistence.model;

/**
 * A mutation or request refused because of its content; {@link #field()} names the
 * offending field in the Cloud Bigtable API's terms, so the gRPC layer can answer
 * INVALID_ARGUMENT with it.
 */
public final class InvalidMutationException extends IllegalArgumentException {
  private static final long serialVersionUID = 1L;
  private final String field;
  private final boolean unknownFamily;

  public InvalidMutationException(String field, String problem) {
    this(field, problem, false);
  }

  private InvalidMutationException(String field, String problem, boolean unknownFamily) {
    super(field + " " + problem);
    this.field = field;
    this.unknownFamily = unknownFamily;
  }

  /** A mutation naming a family the table does not have (Cloud Bigtable answers NOT_FOUND). */
  public static InvalidMutationException unknownFamily(String field, String family) {
    return new InvalidMutationException(field, "names unknown column family '" + family + "'", true);
  }

  /** Whether the problem is a family missing from the schema rather than a malformed mutation. */
  public boolean isUnknownFamily() {
    return unknownFamily;
  }

  public String field() {
    return field;
  }
}
