package io.tabula.persistence.model;

/**
 * A mutation or request refused because of its content; {@link #field()} names the
 * offending field in the Cloud Bigtable API's terms, so the gRPC layer can answer
 * INVALID_ARGUMENT with it.
 */
public final class InvalidMutationException extends IllegalArgumentException {
  private static final long serialVersionUID = 1L;
  private final String field;

  public InvalidMutationException(String field, String problem) {
    super(field + " " + problem);
    this.field = field;
  }

  public String field() {
    return field;
  }
}
