package io.tabula.persistence.tablet;

import com.google.errorprone.annotations.concurrent.GuardedBy;
import io.tabula.persistence.schema.TableSchema;
import io.tabula.persistence.storage.Storage;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A tablet's files as its manifest records them, and every change to them: a flush puts
 * its files in front of their groups, a merge puts its output where its inputs were, a
 * split records the children. Each change is made under {@link #lock} from the manifest
 * and version current then, in two steps: the new manifest is made durable, then the
 * version that shows its files is installed ({@link Tablet#changeVersion}). A file leaves
 * the disk only after both, once no reader holds a version that lists it.
 *
 * <p>Invariants: (1) the manifest and the files of the installed version change together,
 * under {@link #lock}; (2) a new manifest is durable before its version is installed;
 * (3) the redo point only grows; (4) once {@link #close closed} or split, a merge commits nothing;
 * (5) files written for a change are deleted only if its manifest was certainly not
 * published, and files a change drops (older manifests too) only if it was published and a
 * look at this node's fence after that found none ({@link #mayDeleteAfter}).
 *
 * <p>Lock order (see {@link Tablet}): {@link #lock}, then the tablet's version lock inside
 * {@link Tablet#changeVersion}, then its sequence lock. Thread-safe.
 */
final class TabletFiles {
  private final Tablet tablet;
  private final TabletEnv env;
  /** The tablet's server times: each manifest records the highest handed out ({@link #commit}). */
  private final ServerTimes serverTimes;
  /** Held while a manifest is committed and its version installed (short: one small file written). */
  private final ReentrantLock lock = new ReentrantLock();

  @GuardedBy("lock")
  private TabletManifest manifest;
  /** The manifest version this owner last published: its next commit publishes the one after. */
  @GuardedBy("lock")
  private long manifestVersion;

  private final AtomicLong nextFileNumber;
  /** Written under {@link #lock}; read by any thread. */
  private volatile long redoPoint;
  /** Set once, when the tablet closes. */
  private volatile boolean closed;

  TabletFiles(Tablet tablet, TabletManifest manifest, long manifestVersion, ServerTimes serverTimes) {
    this.tablet = tablet;
    this.env = tablet.env;
    this.serverTimes = serverTimes;
    this.manifest = manifest;
    this.manifestVersion = manifestVersion;
    this.nextFileNumber = new AtomicLong(manifest.nextFileNumber());
    this.redoPoint = manifest.redoPoint();
  }

  /** The sequence up to which every write is in SSTables. */
  long redoPoint() {
    return redoPoint;
  }

  /** Whether the tablet has closed: no flush starts and no merge commits any more. */
  boolean closed() {
    return closed;
  }

  void close() {
    closed = true;
  }

  /**
   * Where the tablet's next SSTable goes: a number no file in the folder has. The file is then
   * created exclusively ({@link Storage#createNew}): a number can be taken between this look
   * and that creation by a file a crash left behind or by another owner of the tablet (a former
   * owner resuming after a freeze allocates from the same manifest), and then that flush fails
   * instead of overwriting the other's file.
   */
  String newFilePath() {
    while (true) {
      String path = Storage.path(tablet.dir, String.format("%06d.sst", nextFileNumber.getAndIncrement()));
      if (!env.storage().exists(path)) {
        return path;
      }
    }
  }

  /**
   * Records a flush of frozen memtable {@code f}: each group's new file ({@code written})
   * goes in front of the group, and the redo point moves to {@code f}'s. If the manifest
   * cannot be committed, nothing changes, and the written files are deleted if the manifest
   * was certainly not published; if it may have been ({@link ManifestMaybeAdoptedException}),
   * they are left to the master's sweep: the manifest a new owner adopted may name them.
   */
  void addFlushed(TabletVersion.Frozen f, Map<String, SSTableHandle> written) throws IOException {
    lock.lock();
    try {
      ManifestCodec.Published published;
      try {
        Map<String, List<TabletManifest.FileRef>> groups = new LinkedHashMap<>();
        for (String g : union(manifest.groups().keySet(), written.keySet())) {
          List<TabletManifest.FileRef> refs = new ArrayList<>();
          if (written.containsKey(g)) {
            refs.add(new TabletManifest.FileRef(written.get(g).path(), true));
          }
          refs.addAll(manifest.files(g));
          groups.put(g, refs);
        }
        published = commit(manifest.withFiles(groups, Math.max(redoPoint, f.redoPoint()),
            tablet.nextSequenceSnapshot() - 1, serverTimes.max(), nextFileNumber.get()));
      } catch (ManifestMaybeAdoptedException e) {
        written.values().forEach(h -> h.discard(false));
        throw e;
      } catch (IOException | RuntimeException e) {
        written.values().forEach(h -> h.discard(true));
        throw e;
      }
      mayDeleteAfter(published);
      tablet.changeVersion(cur -> {
        List<TabletVersion.Frozen> frozen = new ArrayList<>(cur.frozen);
        frozen.remove(f);
        Map<String, List<SSTableHandle>> files = new HashMap<>(cur.files);
        written.forEach((g, h) -> {
          List<SSTableHandle> l = new ArrayList<>();
          l.add(h);
          l.addAll(cur.files(g));
          files.put(g, l);
        });
        return new TabletVersion(cur.active, frozen, files);
      });
      redoPoint = Math.max(redoPoint, f.redoPoint());
      reopenIfStale(written.keySet());
    } finally {
      lock.unlock();
    }
  }

  /**
   * Records a merge of {@code inputs} (a contiguous run of group {@code g}'s files, newest
   * first) into {@code out}, which takes their place (null: the merge kept nothing). The
   * run stays contiguous while flushes add files in front of it. If the manifest cannot be
   * committed, nothing changes, and {@code out} is deleted if the manifest was certainly not
   * published (else left to the master's sweep, as in {@link #addFlushed}). The inputs are
   * marked obsolete (deleted once no reader holds them) only if the commit was published and
   * {@link #mayDeleteAfter} allows it: else they are left to the master's sweep too. A merge
   * commits nothing into a closed or split tablet (whose children name its inputs): {@code
   * out} is deleted then. A split holds merges, so it waits for the running one instead.
   */
  void replaceMerged(String g, List<SSTableHandle> inputs, SSTableHandle out) throws IOException {
    lock.lock();
    try {
      ManifestCodec.Published published;
      try {
        if (closed || manifest.state() != TabletManifest.State.ACTIVE) {
          throw new IOException("tablet " + tablet.id() + " was " + (closed ? "closed" : "split")
              + " during a merging compaction, which commits nothing");
        }
        List<TabletManifest.FileRef> refs = manifest.files(g);
        int at = indexOfPath(refs, inputs.get(0).path());
        Map<String, List<TabletManifest.FileRef>> groups = new LinkedHashMap<>(manifest.groups());
        groups.put(g, replaced(refs, at, at + inputs.size(), out == null ? null
            : new TabletManifest.FileRef(out.path(), true)));
        published = commit(manifest.withFiles(groups, redoPoint, tablet.nextSequenceSnapshot() - 1,
            serverTimes.max(), nextFileNumber.get()));
      } catch (ManifestMaybeAdoptedException e) {
        if (out != null) {
          out.discard(false);
        }
        throw e;
      } catch (IOException | RuntimeException e) {
        if (out != null) {
          out.discard(true);
        }
        throw e;
      }
      boolean mayDelete = mayDeleteAfter(published);
      tablet.changeVersion(cur -> {
        List<SSTableHandle> now = cur.files(g);
        int at = now.indexOf(inputs.get(0));
        Map<String, List<SSTableHandle>> files = new HashMap<>(cur.files);
        files.put(g, replaced(now, at, at + inputs.size(), out));
        if (mayDelete) {
          inputs.forEach(SSTableHandle::markObsolete);
        }
        return new TabletVersion(cur.active, cur.frozen, files);
      });
      reopenIfStale(java.util.List.of(g));
    } finally {
      lock.unlock();
    }
  }

  /**
   * After a schema change: reopens, on the background executor, the files of each group whose
   * in-memory setting changed, so that they are read whole into memory or go back to the block
   * cache.
   */
  void schemaChanged(TableSchema before, TableSchema after) {
    for (String g : after.groupNames()) {
      if (before.inMemory(g) != after.inMemory(g) && !tablet.currentVersion().files(g).isEmpty()) {
        scheduleReopen(g);
      }
    }
  }

  private void scheduleReopen(String g) {
    env.background().execute(() -> {
      try {
        reopen(g);
      } catch (IOException | RuntimeException e) {
        env.failures().report("reopening locality group " + g + " of tablet " + tablet.id(), e);
      }
    });
  }

  /**
   * After a flush or merge installed files in {@code groups}: a file written while the
   * group's in-memory setting changed was opened the old way, so the group is reopened.
   */
  @GuardedBy("lock")
  private void reopenIfStale(java.util.Collection<String> groups) {
    for (String g : groups) {
      boolean inMemory = tablet.schema().inMemory(g);
      if (tablet.currentVersion().files(g).stream().anyMatch(h -> h.reader().inMemory() != inMemory)) {
        scheduleReopen(g);
      }
    }
  }

  /**
   * Reopens group {@code g}'s files as the schema now says (in memory or not); files already
   * so are kept. The manifest does not change; the lock keeps flushes and merges from changing
   * the group meanwhile.
   */
  void reopen(String g) throws IOException {
    lock.lock();
    try {
      boolean inMemory = tablet.schema().inMemory(g);
      List<SSTableHandle> now = tablet.currentVersion().files(g);
      if (closed || now.stream().allMatch(h -> h.reader().inMemory() == inMemory)) {
        return;
      }
      List<SSTableHandle> opened = new ArrayList<>();
      try {
        for (SSTableHandle h : now) {
          opened.add(h.reader().inMemory() == inMemory ? h : SSTableFiles.open(env, h.path(), h.owned(), inMemory));
        }
      } catch (IOException | RuntimeException e) {
        for (int i = 0; i < opened.size(); i++) {
          if (opened.get(i) != now.get(i)) {
            opened.get(i).discard(false);
          }
        }
        throw e;
      }
      tablet.changeVersion(cur -> {
        Map<String, List<SSTableHandle>> files = new HashMap<>(cur.files);
        files.put(g, opened);
        return new TabletVersion(cur.active, cur.frozen, files);
      });
    } finally {
      lock.unlock();
    }
  }

  /**
   * For a backup (docs/backups.md): the SSTables of the installed version by group, newest
   * first (with the tablet's last sequence and server-time floor: no cell in them exceeds
   * either), after a manifest in which none of them is owned any more is committed, so that no
   * owner of the tablet, now or after a move, deletes them once a compaction replaces them; the
   * master's sweep deletes them once no backup and no tablet names them. Refused (an {@link
   * IOException}) once the tablet closed or split.
   */
  /** What {@link #disownAll} lists: the files by group, the tablet's last sequence and server-time floor then. */
  record Disowned(Map<String, List<String>> files, long lastSequence, long maxServerTime) {}

  Disowned disownAll() throws IOException {
    lock.lock();
    try {
      if (closed || manifest.state() != TabletManifest.State.ACTIVE) {
        throw new TabletUnavailableException("tablet " + tablet.id() + " was " + (closed ? "closed" : "split")
            + " before a backup could list its files");
      }
      Map<String, List<TabletManifest.FileRef>> groups = new LinkedHashMap<>();
      Map<String, List<String>> out = new LinkedHashMap<>();
      boolean owned = false;
      for (Map.Entry<String, List<TabletManifest.FileRef>> g : manifest.groups().entrySet()) {
        List<TabletManifest.FileRef> refs = new ArrayList<>();
        List<String> paths = new ArrayList<>();
        for (TabletManifest.FileRef r : g.getValue()) {
          owned |= r.owned();
          refs.add(new TabletManifest.FileRef(r.path(), false));
          paths.add(r.path());
        }
        groups.put(g.getKey(), refs);
        out.put(g.getKey(), paths);
      }
      if (owned) {
        mayDeleteAfter(commit(manifest.withFiles(groups, redoPoint, tablet.nextSequenceSnapshot() - 1,
            serverTimes.max(), nextFileNumber.get())));
      }
      tablet.currentVersion().files.values().forEach(l -> l.forEach(SSTableHandle::disown));
      return new Disowned(out, tablet.nextSequenceSnapshot() - 1, serverTimes.max());
    } finally {
      lock.unlock();
    }
  }

  /** Records the split in this tablet's manifest (the commit point), then writes the children's. */
  List<ManifestCodec.Versioned> recordSplit(TabletManifest.SplitInfo info, long lastSequence) throws IOException {
    lock.lock();
    try {
      TabletManifest parent = manifest.withFiles(manifest.groups(), redoPoint, lastSequence, serverTimes.max(),
          nextFileNumber.get()).asSplit(info);
      mayDeleteAfter(commit(parent));
      List<ManifestCodec.Versioned> children = new java.util.ArrayList<>();
      for (TabletManifest c : parent.children()) {
        children.add(ManifestCodec.create(env.storage(), Tablet.dirOf(c.table(), c.tabletId()), c));
      }
      return children;
    } finally {
      lock.unlock();
    }
  }

  /**
   * Writes {@code next} as the tablet's manifest, unless this node's commit log is fenced or a
   * newer owner has claimed the tablet: it is published as the version after the one this owner
   * holds, which fails if that version exists ({@link ManifestConflictException}). A new owner
   * claims a version as it opens the tablet, so an owner that passed the fence check and then
   * froze cannot replace the new owner's manifest when it resumes (docs/fencing.md). Deletes
   * nothing: the caller asks {@link #mayDeleteAfter} what it may delete. The callers read
   * {@code next}'s {@code maxServerTime} after the writes it covers took their server times: a
   * write took it before it went into the memtable, so before that memtable froze and flushed.
   *
   * @throws ManifestMaybeAdoptedException if the version was published and then superseded, or
   *     whether it was published is unknown: the change's files must stay
   */
  @GuardedBy("lock")
  private ManifestCodec.Published commit(TabletManifest next) throws IOException {
    env.log().checkNotFenced();
    ManifestCodec.Published published = ManifestCodec.publish(env.storage(), tablet.dir, next, manifestVersion);
    manifestVersion = published.version();
    manifest = next;
    return published;
  }

  /**
   * After {@code published}: whether this owner may delete what its manifest dropped (a
   * merge's inputs; the older manifest versions, which this deletes then). Only if a look at
   * this node's commit-log fence, begun after the publish, finds none; a look that fails (an
   * I/O error) counts as a fence found. The change is made either way; what is not deleted
   * here is left to the master's sweep, which deletes only files no manifest names.
   *
   * <p>Why. The version check alone cannot tell "the newest" from "published into a folder
   * whose newer versions are gone": the master's sweep removes the manifests of a split or
   * merge parent, whose SSTables the children's manifests name (shared), so a former owner
   * that froze for longer than the sweep's grace publishes there unrefused, and its merge's
   * inputs are the children's files. But a tablet gets a new owner only once the master has
   * fenced this node's log (or once this owner closed the tablet cleanly, after which it
   * commits nothing), and a fence marker is never deleted. The look began after the publish
   * and found no marker, so no fence had completed then, and every claim of the tablet by a
   * later owner, and every split or merge of it by one, began after the publish. When the
   * publish listed the folder, then, it was no swept parent's (a tablet leaves the directory
   * only by a split or merge made by its owner: this one, whose tablet is closed after it, or
   * a later one), and no version was newer than this one. Every later version is a claim's,
   * which publishes again the newest it reads: this version, or one a claim derived from it.
   * So this version is the newest, any later claim adopts it, and what it dropped is named by
   * no manifest to come. A look that found the fence proves none of this.
   */
  @GuardedBy("lock")
  private boolean mayDeleteAfter(ManifestCodec.Published published) {
    boolean fenced;
    try {
      fenced = env.log().isFenced();
    } catch (UncheckedIOException unknown) {
      fenced = true;
    }
    if (!fenced) {
      ManifestCodec.deleteOlder(env.storage(), tablet.dir, published);
    }
    return !fenced;
  }

  private static int indexOfPath(List<TabletManifest.FileRef> refs, String path) {
    for (int i = 0; i < refs.size(); i++) {
      if (refs.get(i).path().equals(path)) {
        return i;
      }
    }
    throw new IllegalStateException("merge input " + path + " is no longer in the manifest");
  }

  /** {@code list} with {@code [from, to)} replaced by {@code merged} (left out if null: the merge kept nothing). */
  private static <T> List<T> replaced(List<T> list, int from, int to, T merged) {
    List<T> l = new ArrayList<>(list.subList(0, from));
    if (merged != null) {
      l.add(merged);
    }
    l.addAll(list.subList(to, list.size()));
    return l;
  }

  private static List<String> union(Collection<String> a, Collection<String> b) {
    TreeSet<String> s = new TreeSet<>(a);
    s.addAll(b);
    return new ArrayList<>(s);
  }
}
