package io.tabula.actors;

/**
 * Why an actor refused a request, in the Cloud Bigtable status vocabulary the gRPC layer
 * maps one to one, plus {@link #MOVED}: the tablet no longer serves the row (it split, or
 * closed), and the caller should look the row up again and retry there.
 */
public enum ErrorCode {
  INVALID_ARGUMENT,
  NOT_FOUND,
  ALREADY_EXISTS,
  FAILED_PRECONDITION,
  UNAVAILABLE,
  INTERNAL,
  MOVED
}
