package io.tabula.bench;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDate;
import java.util.Locale;
import picocli.CommandLine.Model.CommandSpec;

/** What the benchmarks' Markdown result files share: the header lines and the writing of the file. */
public final class ResultsFile {
  private ResultsFile() {
  }

  /** Writes {@code markdown} to {@code file} as UTF-8, creating its parent directories first. */
  public static void write(Path file, String markdown) throws IOException {
    Path parent = file.toAbsolutePath().getParent();
    if (parent != null) {
      Files.createDirectories(parent);
    }
    Files.writeString(file, markdown, StandardCharsets.UTF_8);
  }

  /** The "Date: ... Machine: ... Java ..." line, then a blank line. */
  public static String machineLine() {
    return String.format(Locale.ROOT, "Date: %s. Machine: %d cores, shared. Java %s.%n%n", LocalDate.now(),
        Runtime.getRuntime().availableProcessors(), System.getProperty("java.version"));
  }

  /** The 1-, 5- and 15-minute load averages of the machine, or "unknown" where the system does not say. */
  public static String loadAverage() {
    try {
      String[] f = Files.readString(Path.of("/proc/loadavg")).trim().split("\\s+");
      return f[0] + " / " + f[1] + " / " + f[2];
    } catch (IOException | RuntimeException e) {
      return "unknown";
    }
  }

  /**
   * The command that ran the benchmark: the {@code BENCH_COMMAND} environment variable a
   * launcher script sets, else {@code java -cp ...} with {@code main}'s class and the
   * arguments picocli parsed for {@code spec}.
   */
  public static String command(Class<?> main, CommandSpec spec) {
    String c = System.getenv("BENCH_COMMAND");
    if (c != null && !c.isBlank()) {
      return c;
    }
    return "java -cp ... " + main.getName() + " "
        + String.join(" ", spec.commandLine().getParseResult().originalArgs());
  }
}
