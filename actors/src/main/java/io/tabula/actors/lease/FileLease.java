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
import java.nio.file.attribute.BasicFileAttributes;
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
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.LongSupplier;
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
 * number ({@code 0000000007}) holding the owner's name and a renewal count. To take the lease, a
 * process publishes the next generation's file with a hard link, which fails if the name
 * exists: of two takers exactly one wins. It may do so only when the newest generation is
 * released or expired. Expired means the taker has seen that generation's file unchanged (its
 * content, modification time and size; each renewal writes a higher count) for longer than
 * {@code heartbeat-timeout} by the taker's own monotonic clock. No wall clock and no file time
 * decides: a clock stepped by NTP changes nothing, and only the rates of the holder's and the
 * taker's monotonic clocks matter. The holder rewrites its file every {@code
 * heartbeat-interval}; before each renewal it looks for a newer generation and for a gap since
 * its last renewal longer than the timeout (by its own monotonic clock, which runs on while the
 * process is frozen): either one means the lease is lost, and the callback given to {@link
 * #acquire(Consumer)} is called once.
 *
 * <p>A taker's wait starts at its first look, so a node does not begin looking only when it
 * wants the lease: an instance that Pekko's {@code LeaseProvider} makes (on every node, when
 * the singleton manager starts) looks at the newest generation every {@code
 * heartbeat-interval} while it does not hold the lease, until its actor system terminates. When
 * the holder froze long before, its wait has run by the time it tries.
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
 * finds out on its next renewal), and only if the holder's and the taker's monotonic clocks run
 * at about the same rate and a taker reads the holder's renewals once they are written (the
 * lease folder's consistency across processes). That is why
 * the master never relies on the lease alone: its journal fences an older master's writes
 * ({@code MasterJournal}; docs/fencing.md). The lease decides who should be master; the fence
 * makes a stale one harmless.
 *
 * <p>Thread-safe: every method may be called from any thread. Acquire, release and {@link
 * #checkLease} do a little file I/O on the caller's thread; renewals run on a daemon thread of
 * this instance while it holds the lease, and the looks of the instances that watch on one
 * daemon thread of the class.
 */
public final class FileLease extends Lease {
  private static final Logger LOG = LoggerFactory.getLogger(FileLease.class);

  /** Directory name suffix after the URL-encoded lease name. */
  static final String SUFFIX = ".leases";
  private static final String RELEASED = "released";

  /** Instances that hold their lease now, so a node can ask whether it holds one ({@link #holdsAny}). */
  private static final Set<FileLease> HOLDING = ConcurrentHashMap.newKeySet();

  /** Looks at the newest generation for the instances that watch (see the class comment). */
  private static final ScheduledExecutorService WATCHER = Executors.newSingleThreadScheduledExecutor(r -> {
    Thread t = new Thread(r, "file-lease-watcher");
    t.setDaemon(true);
    return t;
  });

  private final LeaseSettings settings;
  private final Path dir;
  private final long timeoutNanos;
  private final long intervalNanos;
  /** This process's monotonic clock: the holder's own timeout and a taker's wait. */
  private final LongSupplier nanoTime;

  // Guarded by this.
  @GuardedBy("this")
  private long generation; // held, or 0
  @GuardedBy("this")
  private long renewedAt; // nanoTime when the last renewal (or the taking) began
  @GuardedBy("this")
  private long renewals;
  @GuardedBy("this")
  private ScheduledExecutorService renewer;
  /** The channel holding the OS lock on the held generation's {@code .alive} file. */
  @GuardedBy("this")
  private FileChannel alive;
  @GuardedBy("this")
  private Consumer<Optional<Throwable>> leaseLostCallback;
  /** The newest generation's file as this instance last saw it, while it does not hold the lease. */
  @GuardedBy("this")
  private Look seen;
  /** Since when (nanoTime) it has seen {@link #seen} unchanged. */
  @GuardedBy("this")
  private long seenSince;

  /** One look at a generation's file: any change in it is a renewal (or a release). */
  private record Look(long generation, String content, long modifiedMillis, long size) {}

  /**
   * The constructor Pekko's {@code LeaseProvider} calls: this instance watches the lease's newest
   * generation while it does not hold it, until the actor system terminates.
   */
  public FileLease(LeaseSettings settings, ExtendedActorSystem system) {
    this(settings);
    ScheduledFuture<?> watching = WATCHER.scheduleWithFixedDelay(this::watch, intervalNanos, intervalNanos,
        TimeUnit.NANOSECONDS);
    system.registerOnTermination(() -> watching.cancel(false));
  }

  /** For use without an actor system (tools, tests): the same lease, looking only when asked to take it. */
  public FileLease(LeaseSettings settings) {
    this(settings, System::nanoTime);
  }

  /** As {@link #FileLease(LeaseSettings)}, on the monotonic clock {@code nanoTime}. */
  FileLease(LeaseSettings settings, LongSupplier nanoTime) {
    this.settings = settings;
    this.dir = leaseDir(settings);
    this.timeoutNanos = settings.timeoutSettings().heartbeatTimeout().toNanos();
    this.intervalNanos = settings.timeoutSettings().heartbeatInterval().toNanos();
    this.nanoTime = nanoTime;
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
      if (nanoTime.getAsLong() - renewedAt <= timeoutNanos && !Files.exists(file(generation + 1))) {
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
    long started = nanoTime.getAsLong();
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
    seen = null;
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

  /**
   * Whether generation {@code g}, the newest, is released, its holder is dead, or it expired:
   * this instance has seen its file unchanged for longer than the timeout, by its own clock.
   */
  private boolean takeable(long g) throws IOException {
    Look look = look(g);
    if (look == null) {
      return false; // cleaned up by a newer taker between listing and reading: look again later
    }
    if (look.content().lines().skip(1).findFirst().orElse("").equals(RELEASED) || holderDied(g)) {
      return true;
    }
    return unchangedFor(look) > timeoutNanos;
  }

  /** Generation {@code g}'s file as it is now; null if it is gone. */
  private Look look(long g) throws IOException {
    Path f = file(g);
    try {
      String content = Files.readString(f, UTF_8);
      BasicFileAttributes a = Files.readAttributes(f, BasicFileAttributes.class);
      return new Look(g, content, a.lastModifiedTime().toMillis(), a.size());
    } catch (NoSuchFileException gone) {
      return null;
    }
  }

  /** Records {@code look}; returns for how long (nanos, this instance's clock) the newest generation has looked exactly so. */
  private synchronized long unchangedFor(Look look) {
    long now = nanoTime.getAsLong();
    if (!look.equals(seen)) {
      seen = look;
      seenSince = now;
    }
    return now - seenSince;
  }

  /**
   * One look at the newest generation while this instance does not hold the lease, so that a
   * holder that stopped renewing has been seen so for a while when this one tries to take it.
   * Runs every heartbeat interval on the watcher thread for instances made by Pekko's lease
   * provider.
   */
  void watch() {
    synchronized (this) {
      if (generation != 0) {
        return;
      }
    }
    try {
      if (!Files.isDirectory(dir)) {
        return;
      }
      long newest = newestGeneration();
      Look look = newest > 0 ? look(newest) : null;
      if (look != null) {
        unchangedFor(look);
      }
    } catch (IOException e) {
      LOG.debug("lease [{}]: a look at its newest generation in {} failed", settings.leaseName(), dir, e);
    }
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
      long started = nanoTime.getAsLong();
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
