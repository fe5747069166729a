package io.tabula.actors.lease;

import static java.nio.charset.StandardCharsets.UTF_8;

import java.io.IOException;
import java.net.URLEncoder;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.function.Consumer;
import org.apache.pekko.actor.ExtendedActorSystem;
import org.apache.pekko.coordination.lease.LeaseException;
import org.apache.pekko.coordination.lease.LeaseSettings;
import org.apache.pekko.coordination.lease.javadsl.Lease;

/**
 * A Pekko coordination {@link Lease} held by an exclusive OS file lock ({@link
 * FileChannel#tryLock()}) on {@code <lease-dir>/<url-encoded lease name>.lease}.
 *
 * <p>Loaded by Pekko's {@code LeaseProvider} from a config section whose {@code lease-class}
 * names this class (see {@code tabula.master-lease} in this module's {@code reference.conf});
 * the provider accepts either Pekko lease base class with a {@code (LeaseSettings,
 * ExtendedActorSystem)} or {@code (LeaseSettings)} constructor. This is the Java one, so the
 * Java {@code LeaseProvider} hands back this very instance.
 *
 * <p>What it promises:
 *
 * <ol>
 *   <li>{@link #acquire()} completes with {@code true} only if this process got the OS lock,
 *       or this instance already holds it (reentrant); {@code false} if another process or
 *       another instance in this JVM holds it. It never waits.
 *   <li>Once acquired, the lease is held until {@link #release()} or the death of the
 *       process: the operating system frees the lock when the process ends, also on {@code
 *       kill -9}, which is how a crashed master hands over without waiting for a timeout.
 *       Heartbeat settings are accepted for the shape of the config and ignored: there is no
 *       expiry.
 *   <li>While the process lives the lock is lost only if its channel is closed (for example
 *       by an interrupt during I/O on it, which this class never does after acquiring).
 *       {@link #checkLease()} notices that and then calls the callback given to {@link
 *       #acquire(Consumer)} since the last {@link #release()}, once, with an empty {@code
 *       Optional}. There is no other way for
 *       the lock to go away, so the callback is otherwise never called.
 *   <li>The file also records the last owner ({@link LeaseSettings#ownerName()}) for
 *       operators; the content has no meaning to the lease, the lock is what counts.
 * </ol>
 *
 * <p>Hazard: POSIX record locks belong to the process, and closing <em>any</em> descriptor
 * of the file in this process drops them, while {@link FileLock#isValid()} keeps saying
 * {@code true}. So a second instance in the same JVM must never open the file while the
 * first holds it: a JVM-wide table of held paths ({@link #HELD}) refuses it before it opens
 * anything. Nothing else in the holding JVM may open the lock file either (reading it is
 * fine from another process). The table is per class loader.
 *
 * <p>Requires: {@code lease-dir} set to a directory this process may create and write (the
 * node sets it to its data directory). Thread-safe: all methods may be called from any
 * thread; they do their small amount of file I/O on the calling thread.
 */
public final class FileLease extends Lease {

  /** Lock file paths held by some instance in this class loader, to the holding instance. */
  private static final ConcurrentMap<Path, FileLease> HELD = new ConcurrentHashMap<>();

  /** File name suffix after the URL-encoded lease name. */
  static final String SUFFIX = ".lease";

  private final LeaseSettings settings;
  private final Path path;

  // Guarded by this.
  private FileChannel channel;
  private FileLock lock;
  private Consumer<Optional<Throwable>> leaseLostCallback;

  /** The constructor Pekko's {@code LeaseProvider} calls. */
  public FileLease(LeaseSettings settings, ExtendedActorSystem system) {
    this(settings);
  }

  /** For use without an actor system (tools, tests): the same lease. */
  public FileLease(LeaseSettings settings) {
    this.settings = settings;
    this.path = lockFile(settings);
  }

  /** Where the lock file of these settings lives; also useful to operators and tests. */
  public static Path lockFile(LeaseSettings settings) {
    String dir = settings.leaseConfig().hasPath("lease-dir")
        ? settings.leaseConfig().getString("lease-dir")
        : "";
    if (dir.isBlank()) {
      throw new IllegalArgumentException(
          "lease-dir is not set for lease [" + settings.leaseName()
              + "]: set it to a directory on the node's own disk, e.g. its data directory");
    }
    if (settings.leaseName().isEmpty()) {
      throw new IllegalArgumentException("lease name must not be empty");
    }
    String fileName = URLEncoder.encode(settings.leaseName(), UTF_8) + SUFFIX;
    return Path.of(dir).toAbsolutePath().normalize().resolve(fileName);
  }

  @Override
  public LeaseSettings getSettings() {
    return settings;
  }

  /** The lock file this lease locks. */
  public Path path() {
    return path;
  }

  @Override
  public CompletionStage<Boolean> acquire() {
    if (checkLease()) {
      return CompletableFuture.completedFuture(true);
    }
    try {
      return CompletableFuture.completedFuture(tryAcquire());
    } catch (IOException e) {
      return failed("could not lock", e);
    }
  }

  /**
   * As {@link #acquire()}, and keeps {@code leaseLostCallback} until {@link #release()} or the
   * loss it reports; see the class comment for when it can be called.
   */
  @Override
  public CompletionStage<Boolean> acquire(Consumer<Optional<Throwable>> leaseLostCallback) {
    synchronized (this) {
      this.leaseLostCallback = leaseLostCallback;
    }
    return acquire();
  }

  /**
   * Completes with {@code true} if this instance held the lease and let it go. Forgets the
   * callback given to {@link #acquire(Consumer)} either way, so a later {@link #acquire()}
   * does not report a loss to it.
   */
  @Override
  public CompletionStage<Boolean> release() {
    synchronized (this) {
      leaseLostCallback = null;
      if (lock == null) {
        return CompletableFuture.completedFuture(false);
      }
      try {
        closeHeld();
        return CompletableFuture.completedFuture(true);
      } catch (IOException e) {
        return failed("could not unlock", e);
      }
    }
  }

  @Override
  public boolean checkLease() {
    Consumer<Optional<Throwable>> lost;
    synchronized (this) {
      if (lock == null) {
        return false;
      }
      // Closing the channel invalidates the lock, but only after it marks the channel closed,
      // so both are checked to notice a close that is still under way.
      if (lock.isValid() && channel.isOpen()) {
        return true;
      }
      lost = leaseLostCallback;
      leaseLostCallback = null;
      HELD.remove(path, this);
      lock = null;
      channel = null;
    }
    if (lost != null) {
      lost.accept(Optional.empty());
    }
    return false;
  }

  private synchronized boolean tryAcquire() throws IOException {
    if (lock != null) {
      return true; // acquired by a concurrent call since checkLease()
    }
    if (HELD.putIfAbsent(path, this) != null) {
      return false; // another instance in this JVM: opening the file would drop its lock
    }
    boolean acquired = false;
    FileChannel opened = null;
    try {
      Files.createDirectories(path.getParent());
      opened = FileChannel.open(
          path, StandardOpenOption.CREATE, StandardOpenOption.READ, StandardOpenOption.WRITE);
      FileLock obtained;
      try {
        obtained = opened.tryLock();
      } catch (OverlappingFileLockException e) {
        obtained = null; // held through a channel this class does not know; same answer
      }
      if (obtained == null) {
        return false;
      }
      recordOwner(opened);
      channel = opened;
      lock = obtained;
      acquired = true;
      return true;
    } finally {
      if (!acquired) {
        HELD.remove(path, this);
        if (opened != null) {
          opened.close();
        }
      }
    }
  }

  /** A failed stage naming the lease, the file and what went wrong. */
  private CompletionStage<Boolean> failed(String what, IOException cause) {
    LeaseException failure = new LeaseException(
        "lease [" + settings.leaseName() + "] " + what + " " + path + ": " + cause);
    failure.initCause(cause);
    return CompletableFuture.failedFuture(failure);
  }

  private void recordOwner(FileChannel opened) throws IOException {
    byte[] owner = (settings.ownerName() + "\n").getBytes(UTF_8);
    opened.truncate(0);
    opened.write(ByteBuffer.wrap(owner), 0);
    opened.force(false);
  }

  private void closeHeld() throws IOException {
    try {
      lock.release();
    } finally {
      try {
        channel.close();
      } finally {
        lock = null;
        channel = null;
        HELD.remove(path, this);
      }
    }
  }
}
