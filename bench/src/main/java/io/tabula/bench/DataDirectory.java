package io.tabula.bench;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.stream.Stream;

/**
 * The benchmark's scratch directory. It is wiped at the start and the end of a run, so to
 * keep a mistyped {@code --dir} from erasing someone's files, it is only ever wiped if it
 * is empty or carries the {@value #MARKER} file a previous run left in it.
 */
public final class DataDirectory {
  static final String MARKER = ".tabula-bench";

  private final Path root;

  private DataDirectory(Path root) {
    this.root = root;
  }

  /**
   * Wipes (or creates) {@code root} and marks it as the benchmark's.
   *
   * @throws IOException if {@code root} holds files but no marker
   */
  static DataDirectory prepare(Path root) throws IOException {
    Path abs = root.toAbsolutePath().normalize();
    if (Files.exists(abs)) {
      if (!Files.isDirectory(abs)) {
        throw new IOException(abs + " exists and is not a directory");
      }
      boolean empty;
      try (Stream<Path> s = Files.list(abs)) {
        empty = s.findAny().isEmpty();
      }
      if (!empty && !Files.exists(abs.resolve(MARKER))) {
        throw new IOException(abs + " is not empty and was not made by this benchmark (no " + MARKER
            + " file); refusing to wipe it. Pass an empty or new --dir.");
      }
      deleteTree(abs);
    }
    Files.createDirectories(abs);
    Files.createFile(abs.resolve(MARKER));
    return new DataDirectory(abs);
  }

  Path root() {
    return root;
  }

  /** A fresh, empty subdirectory for one engine instance. */
  Path fresh(String name) throws IOException {
    Path p = root.resolve(name);
    if (Files.exists(p)) {
      deleteTree(p);
    }
    return Files.createDirectories(p);
  }

  /** Deletes a subdirectory made by {@link #fresh}. */
  void delete(Path sub) throws IOException {
    if (!sub.startsWith(root) || sub.equals(root)) {
      throw new IllegalArgumentException(sub + " is not a subdirectory of " + root);
    }
    deleteTree(sub);
  }

  /** Bytes of the files under {@code sub}. */
  static long sizeOf(Path sub) throws IOException {
    try (Stream<Path> s = Files.walk(sub)) {
      return s.filter(Files::isRegularFile).mapToLong(p -> {
        try {
          return Files.size(p);
        } catch (IOException e) {
          throw new UncheckedIOException(e);
        }
      }).sum();
    } catch (UncheckedIOException e) {
      throw e.getCause();
    }
  }

  /** Removes the whole directory, marker included. */
  void wipe() throws IOException {
    deleteTree(root);
  }

  /** Deletes {@code p} and everything under it; {@code p} must exist. */
  public static void deleteTree(Path p) throws IOException {
    try (Stream<Path> s = Files.walk(p)) {
      for (Path x : (Iterable<Path>) s.sorted(Comparator.reverseOrder())::iterator) {
        Files.deleteIfExists(x);
      }
    }
  }
}
