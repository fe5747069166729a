package io.tabula.bench.e2e;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.OptionalLong;

/**
 * CPU time a JVM's JIT compiler threads have used, from Linux's per-thread accounting
 * ({@code /proc/<pid>/task/<tid>/stat}), so the warm-up can run until both JVMs have
 * compiled their hot paths. On a machine whose two cores are busy with the benchmark, a C2
 * compilation of one method takes up to a second, and the compilers were still using about
 * half of the client's CPU in the first timed window after a fixed warm-up of 10 seconds.
 */
final class JitActivity {
  /** Clock ticks per second of /proc's CPU times (USER_HZ; 100 on Linux). */
  private static final long TICKS_PER_SECOND = 100;

  private JitActivity() {}

  /** Compiler threads' CPU time in nanoseconds, or empty where /proc is not readable (not Linux). */
  static OptionalLong compilerNanos(long pid) {
    Path tasks = Path.of("/proc", Long.toString(pid), "task");
    if (!Files.isDirectory(tasks)) {
      return OptionalLong.empty();
    }
    long ticks = 0;
    try (DirectoryStream<Path> ds = Files.newDirectoryStream(tasks)) {
      for (Path t : ds) {
        try {
          String name = Files.readString(t.resolve("comm")).trim();
          if (!name.startsWith("C1 CompilerThre") && !name.startsWith("C2 CompilerThre")) {
            continue;
          }
          // Fields after the command's closing parenthesis: state is the first, utime the 12th, stime the 13th.
          String stat = Files.readString(t.resolve("stat"));
          String[] f = stat.substring(stat.lastIndexOf(')') + 2).trim().split("\\s+");
          ticks += Long.parseLong(f[11]) + Long.parseLong(f[12]);
        } catch (IOException | RuntimeException threadGone) {
          // A compiler thread that ended between the listing and the read used no more CPU.
        }
      }
    } catch (IOException e) {
      return OptionalLong.empty();
    }
    return OptionalLong.of(ticks * (1_000_000_000L / TICKS_PER_SECOND));
  }
}
