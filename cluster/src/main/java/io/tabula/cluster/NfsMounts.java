package io.tabula.cluster;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Whether a storage root on local files sits on an NFS mount that gives what Tabula's file
 * operations need across machines (docs/deploy.md, "A shared POSIX file system instead of
 * HDFS"):
 *
 * <ol>
 *   <li>NFS 4.1 or later ({@value #VERSION}). Its sessions make a retransmitted LINK or
 *       exclusive CREATE exactly-once; on NFSv3 and 4.0 one whose reply was lost is sent again
 *       and fails with EEXIST, so a manifest the writer did publish looks taken by another,
 *       and the writer deletes the SSTable its own manifest names.
 *   <li>No attribute caching ({@value #NO_ATTRIBUTE_CACHE}): with it, a node goes on seeing a
 *       folder without the {@code FENCED} marker another node wrote, for up to a minute.
 *   <li>No lookup cache ({@value #NO_LOOKUP_CACHE}): with it, a name another node created (a
 *       marker, a manifest) or removed may be answered from the cache.
 * </ol>
 *
 * <p>The mount is found in {@code /proc/self/mountinfo} (Linux; elsewhere nothing is checked):
 * the longest mount point that holds the data directory's real path, the last listed among
 * equal ones (a later mount hides an earlier one). The options read are the mount's and its
 * file system's, as the kernel shows them (it shows {@code actimeo=0} as the four
 * {@code ac...} times of 0). {@link #mountOf}, {@link #missing} and {@link #check(String, Path,
 * boolean)} are pure functions; only {@link #checkDataDir} reads the file. Stateless.
 */
final class NfsMounts {
  private static final Logger LOG = LoggerFactory.getLogger(NfsMounts.class);
  private static final Path MOUNTINFO = Path.of("/proc/self/mountinfo");

  static final String VERSION = "vers=4.1 or later";
  static final String NO_ATTRIBUTE_CACHE = "noac (or actimeo=0)";
  static final String NO_LOOKUP_CACHE = "lookupcache=none";

  private NfsMounts() {}

  /**
   * One line of mountinfo.
   *
   * @param mountPoint where it is mounted, unescaped
   * @param type the file system type, such as {@code nfs}, {@code nfs4} or {@code ext4}
   * @param source what is mounted, such as {@code server:/export}
   * @param options the mount's options followed by the file system's
   */
  record Mount(String mountPoint, String type, String source, List<String> options) {
    boolean isNfs() {
      return type.equals("nfs") || type.equals("nfs4");
    }
  }

  /**
   * The mount that holds {@code realPath} (absolute, links resolved) in {@code mountinfo}:
   * the longest mount point that is {@code realPath} or one of its parents, the last listed
   * among equal ones. Empty if none does (no line, or no line for {@code /}).
   *
   * @throws IllegalArgumentException on a line that is not mountinfo's
   */
  static Optional<Mount> mountOf(String mountinfo, Path realPath) {
    Mount best = null;
    for (String line : mountinfo.split("\n")) {
      if (line.isBlank()) {
        continue;
      }
      Mount m = parse(line);
      Path point = Path.of(m.mountPoint());
      if (realPath.startsWith(point)
          && (best == null || point.getNameCount() >= Path.of(best.mountPoint()).getNameCount())) {
        best = m;
      }
    }
    return Optional.ofNullable(best);
  }

  /**
   * One mountinfo line: {@code id parent major:minor root mount-point mount-options
   * [optional fields...] - type source super-options} (proc(5)).
   */
  static Mount parse(String line) {
    String[] f = line.trim().split(" ");
    int dash = -1;
    for (int i = 6; i < f.length; i++) {
      if (f[i].equals("-")) {
        dash = i;
        break;
      }
    }
    if (f.length < 7 || dash < 0 || dash + 2 >= f.length) {
      throw new IllegalArgumentException("not a line of /proc/self/mountinfo: " + line);
    }
    List<String> options = new ArrayList<>(List.of(f[5].split(",")));
    if (dash + 3 < f.length) {
      options.addAll(List.of(f[dash + 3].split(",")));
    }
    return new Mount(unescape(f[4]), unescape(f[dash + 1]), unescape(f[dash + 2]), List.copyOf(options));
  }

  /** Undoes mountinfo's octal escapes of space, tab, newline and backslash ({@code \040}...). */
  private static String unescape(String field) {
    StringBuilder out = new StringBuilder(field.length());
    for (int i = 0; i < field.length(); i++) {
      char c = field.charAt(i);
      if (c == '\\' && i + 3 < field.length() && field.substring(i + 1, i + 4).matches("[0-7]{3}")) {
        out.append((char) Integer.parseInt(field.substring(i + 1, i + 4), 8));
        i += 3;
      } else {
        out.append(c);
      }
    }
    return out.toString();
  }

  /** What {@code m} lacks of Tabula's needs ({@link #VERSION}, ...), in that order; empty when it is not NFS. */
  static List<String> missing(Mount m) {
    if (!m.isNfs()) {
      return List.of();
    }
    Map<String, String> o = new HashMap<>();
    for (String option : m.options()) {
      int eq = option.indexOf('=');
      o.put(eq < 0 ? option : option.substring(0, eq), eq < 0 ? "" : option.substring(eq + 1));
    }
    List<String> missing = new ArrayList<>();
    if (!atLeast41(o.getOrDefault("vers", o.get("nfsvers")))) {
      missing.add(VERSION);
    }
    boolean noAttributeCache = o.containsKey("noac") || "0".equals(o.get("actimeo"))
        || List.of("acregmin", "acregmax", "acdirmin", "acdirmax").stream().allMatch(k -> "0".equals(o.get(k)));
    if (!noAttributeCache) {
      missing.add(NO_ATTRIBUTE_CACHE);
    }
    if (!"none".equals(o.get("lookupcache"))) {
      missing.add(NO_LOOKUP_CACHE);
    }
    return missing;
  }

  /** Whether an NFS version option ({@code 3}, {@code 4}, {@code 4.0}, {@code 4.2}...) is 4.1 or later; false if absent. */
  private static boolean atLeast41(String version) {
    if (version == null || !version.matches("\\d+(\\.\\d+)?")) {
      return false;
    }
    String[] v = version.split("\\.");
    int major = Integer.parseInt(v[0]);
    return major > 4 || major == 4 && v.length > 1 && Integer.parseInt(v[1]) >= 1;
  }

  /**
   * Refuses a data directory at {@code realPath} on an NFS mount (in {@code mountinfo}) that
   * lacks any of Tabula's needs, naming each; with {@code allowUnsafe}, logs them instead.
   */
  static void check(String mountinfo, Path realPath, boolean allowUnsafe) {
    Optional<Mount> mount = mountOf(mountinfo, realPath);
    List<String> missing = mount.map(NfsMounts::missing).orElse(List.of());
    if (missing.isEmpty()) {
      return;
    }
    Mount m = mount.get();
    String what = "the storage root " + realPath + " is on NFS (" + m.source() + " at " + m.mountPoint() + ", "
        + m.type() + ") mounted without " + String.join(", ", missing);
    if (allowUnsafe) {
      LOG.warn("{}; tabula.node.allow-unsafe-nfs is on, so the node starts anyway (docs/deploy.md says what can go "
          + "wrong)", what);
      return;
    }
    throw new StartRefusedException(StartRefusedException.Reason.UNSAFE_NFS, what + ". Nodes on several machines "
        + "need NFS 4.1 or later (its sessions make a retried LINK or exclusive CREATE exactly-once; without them a "
        + "manifest a node did publish can look taken, and the node deletes the SSTable it names), no attribute "
        + "caching and no lookup cache (or a node goes on seeing a folder without the FENCED marker another node "
        + "wrote). Mount it with vers=4.2,noac,lookupcache=none (docs/deploy.md), or set "
        + "tabula.node.allow-unsafe-nfs = on to accept the risk");
  }

  /** {@link #check(String, Path, boolean)} of {@code dataDir} on this machine's mounts; nothing where there is no mountinfo. */
  static void checkDataDir(Path dataDir, boolean allowUnsafe) throws IOException {
    if (Files.isReadable(MOUNTINFO)) {
      check(Files.readString(MOUNTINFO), dataDir.toRealPath(), allowUnsafe);
    }
  }
}
