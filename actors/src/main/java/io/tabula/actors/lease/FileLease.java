package io.tabula.actors.lease;

import static java.nio.charset.StandardCharsets.UTF_8;

import com.google.errorprone.annotations.concurrent.GuardedBy;
import java.io.IOException;
import java.net.URLEncoder;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.FileTime;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.apache.pekko.actor.ExtendedActorSystem;
import org.apache.pekko.coordination.lease.LeaseException;
import org.apache.pekko.coordination.lease.LeaseSettings;
import org.apache.pekko.coordination.lease.javadsl.Lease;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A Pekko coordination {@link Lease} kept in files under {@code <lease-dir>/<url-encoded lease
 * name>.leases/}, renewed by its holder and expiring when it is not: a process that is killed,
 * frozen ({@code SIGSTOP}) or cut off from the disk loses it within {@code heartbeat-timeout},
 * and another takes it (the paper's Chubby lock; a lock that a frozen process holds for ever is
 * no lease).
 *
 * <p>Loaded by Pekko's {@code LeaseProvider} from a config section whose {@code lease-class}
 * names this class (see {@code tabula.master-lease} in this module's {@code reference.conf}).
 *
 * <p>How it works. Each taking of the lease is a <em>generation</em>, a file named by its
 * number ({@code 0000000007}) holding the owner's name. To take the lease, a process publishes
 * the next generation's file with a hard link, which fails if the name exists: of two takers
 * exactly one wins. It may do so only when the newest generation is released or expired:
 * its file was last written longer than {@code heartbeat-timeout} ago, by the storage's own
 * clock (a file the taker writes just before tells it the storage's "now"), so the holder's
 * and the taker's clocks are never compared. The holder rewrites its file every {@code
 * heartbeat-interval}; before each renewal it looks for a newer generation and for a gap since
 * its last renewal longer than the timeout (by its own monotonic clock, which runs on while the
 * process is frozen): either one means the lease is lost, and the callback given to {@link
 * #acquire(Consumer)} is called once.
 *
 * <p>A dead holder need not be waited out. The holder also keeps an OS lock on its
 * generation's {@code .alive} file (taken before it publishes the generation); the operating
 * system frees it when the process ends, also on {@code kill -9}. A taker that finds that lock
 * free may take the lease at once: a node restarted after a crash becomes master without
 * waiting for the expiry. A frozen process keeps its OS lock, so it is waited out. (Closing any
 * descriptor of a file drops its process's POSIX locks, so a taker never probes while an
 * instance in its own JVM holds a lease in the same folder.)
 *
 * <p>What it promises, and what it does not: two holders at once only in a window no longer
 * than a heartbeat interval after a holder was frozen or its disk stalled past the timeout (it
 * finds out on its next renewal), and only if clocks run at about the same rate. That is why
 * the master never relies on the lease alone: its journal fences an older master's writes
 * ({@code MasterJournal}; docs/fencing.md). The lease decides who should be master; the fence
 * makes a stale one harmless.
 *
 * <p>Thread-safe: every method may be called from any thread. Acquire, release and {@link
 * #checkLease} do a little file I/O on the caller's thread; renewals run on a daemon thread of
 * this instance while it holds the lease.
 */
public final class FileLease extends Lease {
  private static final Logger LOG = LoggerFactory.getLogger(FileLease.class);

  /** Directory name suffix after the URL-encoded lease name. */
  static final String SUFFIX = ".leases";
  private static final String RELEASED = "released";

  /** Instances that hold their lease now, so a node can ask whether it holds one ({@link #holdsAny}). */
  private static final Set<FileLease> HOLDING = ConcurrentHashMap.newKeySet();

  private final LeaseSettings settings;
  private final Path dir;
  private final long timeoutNanos;
  private final long intervalNanos;

  // Guarded by this.
  @GuardedBy("this")
  private long generation; // held, or 0
  @GuardedBy("this")
  private long renewedAt; // System.nanoTime() when the last renewal (or the taking) began
  @GuardedBy("this")
  private long renewals;
  @GuardedBy("this")
  private ScheduledExecutorService renewer;
  /** The channel holding the OS lock on the held generation's {@code .alive} file. */
  @GuardedBy("this")
  private FileChannel alive;
  @GuardedBy("this")
  private Consumer<Optional<Throwable>> leaseLostCallback;

  /** The constructor Pekko's {@code LeaseProvider} calls. */
  public FileLease(LeaseSettings settings, ExtendedActorSystem system) {
    this(settings);
  }

  /** For use without an actor system (tools, tests): the same lease. */
  public FileLease(LeaseSettings settings) {
    this.settings = settings;
    this.dir = leaseDir(settings);
    this.timeoutNanos = settings.timeoutSettings().heartbeatTimeout().toNanos();
    this.intervalNanos = settings.timeoutSettings().heartbeatInterval().toNanos();
    LeaseSupport.checkTimings(settings);
  }

  /** The folder holding the lease's generation files for these settings. */
  public static Path leaseDir(LeaseSettings settings) {
    String dir = settings.leaseConfig().hasPath("lease-dir")
        ? settings.leaseConfig().getString("lease-dir")
        : "";
    if (dir.isBlank()) {
      throw new IllegalArgumentException(
          "lease-dir is not set for lease [" + settings.leaseName()
              + "]: set it to a directory every contender shares, e.g. the node's data directory");
    }
    if (settings.leaseName().isEmpty()) {
      throw new IllegalArgumentException("lease name must not be empty");
    }
    String name = URLEncoder.encode(settings.leaseName(), UTF_8) + SUFFIX;
    return Path.of(dir).toAbsolutePath().normalize().resolve(name);
  }

  /** Whether some lease of this kind held in this JVM has its folder under {@code leaseDir} and is still held. */
  public static boolean holdsAny(Path leaseDir) {
    Path d = leaseDir.toAbsolutePath().normalize();
    return HOLDING.stream().anyMatch(l -> l.dir.getParent().equals(d) && l.checkLease());
  }

  @Override
  public LeaseSettings getSettings() {
    return settings;
  }

  /** The folder of generation files. */
  public Path dir() {
    return dir;
  }

  @Override
  public CompletionStage<Boolean> acquire() {
    try {
      return CompletableFuture.completedFuture(tryAcquire());
    } catch (IOException e) {
      LeaseException failure = new LeaseException("lease [" + settings.leaseName() + "] could not be taken in "
          + dir + ": " + e);
      failure.initCause(e);
      return CompletableFuture.failedFuture(failure);
    }
  }

  /**
   * As {@link #acquire()}, and keeps {@code leaseLostCallback} until {@link #release()} or the
   * loss it reports, which it reports once.
   */
  @Override
  public CompletionStage<Boolean> acquire(Consumer<Optional<Throwable>> leaseLostCallback) {
    synchronized (this) {
      this.leaseLostCallback = leaseLostCallback;
    }
    return acquire();
  }

  /** Completes with {@code true} if this instance held the lease and marked it released, so another may take it at once. */
  @Override
  public CompletionStage<Boolean> release() {
    synchronized (this) {
      leaseLostCallback = null;
      if (generation == 0) {
        return CompletableFuture.completedFuture(false);
      }
      long g = generation;
      stopHolding();
      try {
        write(g, RELEASED);
        return CompletableFuture.completedFuture(true);
      } catch (IOException e) {
        LeaseException failure = new LeaseException("lease [" + settings.leaseName() + "] could not be marked"
            + " released in " + dir + " (it expires instead): " + e);
        failure.initCause(e);
        return CompletableFuture.failedFuture(failure);
      }
    }
  }

  /**
   * Whether this instance holds the lease: it took it, renewed it within the timeout (by this
   * process's monotonic clock), and no newer generation exists. Looks at the disk.
   */
  @Override
  public boolean checkLease() {
    synchronized (this) {
      if (generation == 0) {
        return false;
      }
      if (System.nanoTime() - renewedAt <= timeoutNanos && !Files.exists(file(generation + 1))) {
        return true;
      }
    }
    renew(); // finds the loss and reports it
    return false;
  }

  private synchronized boolean tryAcquire() throws IOException {
    if (generation != 0) {
      return true; // reentrant; a loss is found by the renewer
    }
    long started = System.nanoTime();
    Files.createDirectories(dir);
    long newest = newestGeneration();
    if (newest > 0 && !takeable(newest)) {
      return false;
    }
    FileChannel lock = FileChannel.open(aliveFile(newest + 1), StandardOpenOption.CREATE, StandardOpenOption.WRITE);
    boolean took = false;
    Path tmp = dir.resolve("take-" + UUID.randomUUID() + ".tmp");
    try {
      if (lock.tryLock() == null) {
        return false; // another process is taking this generation
      }
      writeDurably(tmp, settings.ownerName() + "\n0\n");
      Files.createLink(file(newest + 1), tmp);
      took = true;
    } catch (FileAlreadyExistsException | OverlappingFileLockException taken) {
      return false;
    } finally {
      Files.deleteIfExists(tmp);
      if (!took) {
        lock.close();
      }
    }
    force(dir);
    alive = lock;
    generation = newest + 1;
    renewedAt = started;
    renewals = 0;
    HOLDING.add(this);
    renewer = Executors.newSingleThreadScheduledExecutor(r -> {
      Thread t = new Thread(r, "lease-renewer-" + settings.leaseName());
      t.setDaemon(true);
      return t;
    });
    renewer.scheduleWithFixedDelay(this::renew, intervalNanos, intervalNanos, TimeUnit.NANOSECONDS);
    for (long g : generations()) {
      if (g < newest) {
        Files.deleteIfExists(file(g)); // older generations tell nobody anything any more
        Files.deleteIfExists(aliveFile(g));
      }
    }
    LOG.info("lease [{}] taken by {} as generation {}", settings.leaseName(), settings.ownerName(), generation);
    return true;
  }

  /** Whether generation {@code g}, the newest, is released, its holder is dead, or it expired by the storage's clock. */
  private boolean takeable(long g) throws IOException {
    Path f = file(g);
    String content;
    FileTime written;
    try {
      content = Files.readString(f, UTF_8);
      written = Files.getLastModifiedTime(f);
    } catch (NoSuchFileException gone) {
      return false; // cleaned up by a newer taker between listing and reading: look again later
    }
    if (content.lines().skip(1).findFirst().orElse("").equals(RELEASED) || holderDied(g)) {
      return true;
    }
    Path clock = dir.resolve("clock-" + URLEncoder.encode(settings.ownerName(), UTF_8));
    Files.writeString(clock, "now\n", UTF_8);
    long now = Files.getLastModifiedTime(clock).toMillis();
    return now - written.toMillis() > TimeUnit.NANOSECONDS.toMillis(timeoutNanos);
  }

  /** Whether the OS lock on generation {@code g}'s {@code .alive} file is free: its holder's process has ended. */
  private boolean holderDied(long g) throws IOException {
    if (HOLDING.stream().anyMatch(l -> l.dir.equals(dir))) {
      return false; // held in this JVM: probing would drop that lock (see the class comment)
    }
    Path f = aliveFile(g);
    if (!Files.exists(f)) {
      return false;
    }
    try (FileChannel probe = FileChannel.open(f, StandardOpenOption.WRITE)) {
      FileLock free = probe.tryLock();
      if (free == null) {
        return false;
      }
      free.release();
      LOG.info("lease [{}]: the process holding generation {} has ended, so it is taken without waiting for it to "
          + "expire", settings.leaseName(), g);
      return true;
    } catch (NoSuchFileException | OverlappingFileLockException e) {
      return false;
    }
  }

  /** One renewal, on the renewer thread (or from {@link #checkLease}): finds a loss, or rewrites the generation file. */
  private void renew() {
    Consumer<Optional<Throwable>> lost;
    String why;
    synchronized (this) {
      if (generation == 0) {
        return;
      }
      long started = System.nanoTime();
      if (started - renewedAt > timeoutNanos) {
        why = "not renewed for " + Duration.ofNanos(started - renewedAt).toMillis() + " ms (the process was paused"
            + " or the disk stalled), so another may hold it";
      } else if (Files.exists(file(generation + 1))) {
        why = "taken by a newer holder (generation " + (generation + 1) + ")";
      } else {
        try {
          write(generation, String.valueOf(++renewals));
          renewedAt = started;
        } catch (IOException e) {
          LOG.warn("lease [{}] could not be renewed in {}; it expires unless a later renewal works", settings.leaseName(),
              dir, e);
        }
        return;
      }
      lost = leaseLostCallback;
      leaseLostCallback = null;
      stopHolding();
    }
    LeaseSupport.reportLost(LOG, settings, lost, why);
  }

  @GuardedBy("this")
  private void stopHolding() {
    generation = 0;
    HOLDING.remove(this);
    if (alive != null) {
      try {
        alive.close(); // frees the OS lock
      } catch (IOException e) {
        LOG.debug("closing the lease's lock file failed", e);
      }
      alive = null;
    }
    if (renewer != null) {
      renewer.shutdown();
      renewer = null;
    }
  }

  /** Replaces generation {@code g}'s file with the owner and {@code state}, atomically (its mtime is the renewal). */
  private void write(long g, String state) throws IOException {
    Path tmp = dir.resolve("renew-" + UUID.randomUUID() + ".tmp");
    try {
      writeDurably(tmp, settings.ownerName() + "\n" + state + "\n");
      Files.move(tmp, file(g), StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    } finally {
      Files.deleteIfExists(tmp);
    }
  }

  private static void writeDurably(Path f, String content) throws IOException {
    try (FileChannel ch = FileChannel.open(f, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
      ch.write(UTF_8.encode(content));
      ch.force(true);
    }
  }

  private static void force(Path directory) {
    try (FileChannel ch = FileChannel.open(directory, StandardOpenOption.READ)) {
      ch.force(true);
    } catch (IOException e) {
      // Some file systems cannot sync a directory; the link is still there for every reader.
    }
  }

  private Path file(long g) {
    return dir.resolve(String.format("%010d", g));
  }

  private Path aliveFile(long g) {
    return dir.resolve(String.format("%010d.alive", g));
  }

  private List<Long> generations() throws IOException {
    List<Long> out = new ArrayList<>();
    try (var s = Files.list(dir)) {
      s.map(p -> p.getFileName().toString())
          .filter(n -> n.length() == 10 && n.chars().allMatch(Character::isDigit))
          .forEach(n -> out.add(Long.parseLong(n)));
    }
    out.sort(null);
    return out;
  }

  private long newestGeneration() throws IOException {
    List<Long> g = generations();
    return g.isEmpty() ? 0 : g.get(g.size() - 1);
  }
}
