package io.tabula.persistence.storage;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;

/**
 * A golden file of this package's formats, under {@code /golden/<folder>/<name>} on the test
 * class path: read, or written anew when the build is run with {@code
 * -Dtabula.golden.write=<folder to write it to>} after a deliberate format change.
 */
final class GoldenFile {
  private GoldenFile() {}

  /**
   * The golden bytes of {@code folder/name}; or, when the build regenerates golden files, empty
   * once {@code fresh} has been written in their place.
   */
  static Optional<byte[]> read(String folder, String name, byte[] fresh) throws IOException {
    String out = System.getProperty("tabula.golden.write");
    if (out != null) {
      Files.createDirectories(Path.of(out));
      Files.write(Path.of(out, name), fresh);
      return Optional.empty();
    }
    try (InputStream in = GoldenFile.class.getResourceAsStream("/golden/" + folder + "/" + name)) {
      if (in == null) {
        throw new AssertionError("missing golden file golden/" + folder + "/" + name);
      }
      return Optional.of(in.readAllBytes());
    }
  }
}
