package io.tabula.cluster;

import io.tabula.actors.master.Directory;
import io.tabula.actors.master.TabletPlacement;
import io.tabula.persistence.storage.RootIdentity;
import io.tabula.persistence.storage.RootMismatchException;
import io.tabula.persistence.storage.Storage;
import java.io.IOException;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Deletes the commit-log folders of this node's earlier lives ({@code logs/<node>.<incarnation>}
 * other than the one it writes now) once no tablet in the directory names them: every tablet
 * that had writes in one has been opened again and has flushed what it replayed. Only this
 * node's own folders: another node's earlier lives are that node's to sweep (or the
 * recovery's, when it never comes back). Runs on {@code io}, one sweep at a time. Thread-safe.
 */
final class LogSweeper {
  private static final Logger LOG = LoggerFactory.getLogger(LogSweeper.class);

  private final Storage storage;
  private final String node;
  private final String current;
  private final Executor io;
  private final AtomicBoolean running = new AtomicBoolean();

  LogSweeper(Storage storage, String node, String current, Executor io) {
    this.storage = storage;
    this.node = node;
    this.current = current;
    this.io = io;
  }

  /** The log folder name of incarnation {@code incarnation} of node {@code node}. */
  static String folder(String node, String incarnation) {
    return node + "." + incarnation;
  }

  /**
   * Fences every commit-log folder of node {@code node} (each of its lives, docs/fencing.md):
   * a life that still runs acknowledges nothing more. Only on the cluster's storage root: the
   * root's identity is read first and must be {@code rootId} (the root {@code rootName} this
   * node started on). Returns the folders fenced: none if the node has no folder on this root.
   * Blocks on file I/O.
   *
   * @throws RootMismatchException if the root is not the cluster's: nothing is fenced (the
   *     markers would be where no writer of the cluster looks, and a recovery after them would
   *     find the node's logs absent)
   */
  static List<String> fenceAll(Storage storage, String rootName, UUID rootId, String node) throws IOException {
    RootIdentity.check(storage, rootName, rootId, "node " + node + "'s commit logs are not fenced");
    List<String> fenced = folders(storage, node);
    for (String f : fenced) {
      storage.fence(Storage.path("logs", f));
    }
    return fenced;
  }

  /** The names under {@code logs/} of every commit-log folder of node {@code node} (each of its lives). */
  static List<String> folders(Storage storage, String node) throws IOException {
    List<String> out = new java.util.ArrayList<>();
    for (String f : storage.list("logs")) {
      if (f.startsWith(node + ".") || f.equals(node)) {
        out.add(f);
      }
    }
    return out;
  }

  /** Sweeps, off the caller's thread, over the directory {@code d}. */
  void sweep(Directory d) {
    if (!running.compareAndSet(false, true)) {
      return;
    }
    io.execute(() -> {
      try {
        Set<String> named = new HashSet<>();
        for (TabletPlacement p : d.placement().values()) {
          named.addAll(p.logs());
        }
        for (String f : storage.list("logs")) {
          if (f.startsWith(node + ".") && !f.equals(current) && !named.contains(f)) {
            String dir = Storage.path("logs", f);
            for (String segment : storage.list(dir)) {
              storage.delete(Storage.path(dir, segment));
            }
            storage.delete(dir);
            LOG.info("deleted the commit log {} of an earlier life of this node: no tablet needs it", dir);
          }
        }
      } catch (IOException | RuntimeException e) {
        LOG.warn("could not delete an old commit-log folder; the next directory change tries again: {}",
            e.toString());
      } finally {
        running.set(false);
      }
    });
  }
}
