package io.tabula.persistence.tablet;

/**
 * A commit-log name refused: {@link TabletServer#openTablet} takes the names of folders under
 * {@code logs/} ({@code "n1.a"}), not paths ({@code "logs/n1.a"}, which names a folder that
 * does not exist, so the tablet would open without the writes of the log meant). {@link
 * #parameter()} names the argument that held it.
 */
public final class InvalidLogNameException extends IllegalArgumentException {
  private static final long serialVersionUID = 1L;
  private final String parameter;
  private final String name;

  InvalidLogNameException(String parameter, String name) {
    super(parameter + ": '" + name + "' is not the name of a commit-log folder under logs/ (a name, not a path)");
    this.parameter = parameter;
    this.name = name;
  }

  /** The parameter that held the name. */
  public String parameter() {
    return parameter;
  }

  /** The name refused. */
  public String name() {
    return name;
  }

  /** Throws if {@code name} is not one folder's name: empty, {@code "."}, {@code ".."}, or with a '/'. */
  static void check(String parameter, String name) {
    if (name == null || name.isEmpty() || name.equals(".") || name.equals("..") || name.indexOf('/') >= 0) {
      throw new InvalidLogNameException(parameter, name);
    }
  }
}
