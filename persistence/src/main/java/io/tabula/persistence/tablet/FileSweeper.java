package io.tabula.persistence.tablet;

import io.tabula.persistence.storage.Storage;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.LongSupplier;

/**
 * The master's mark-and-sweep of SSTables (paper §6): deletes the files that no tablet
 * references any more, such as the files a split or a merge left shared between tablets,
 * which no tablet owns and so none deletes when its compactions replace them.
 *
 * <p>Mark: the files named by the manifest of every tablet the master's directory has (read
 * from storage, which is the truth; the directory may lag a flush). A tablet that is gone from
 * the directory (the parent of a recorded split or merge) marks nothing, so its files go once
 * its children no longer name them. Sweep: the {@code .sst} files under those tables' folders
 * that nothing marked. A file is deleted only once it has been found unmarked by sweeps at
 * least {@code grace} apart <em>and</em> was last written more than {@code grace} ago:
 * <ul>
 *   <li>scans that took their snapshot before a compaction replaced a file still read it: the
 *       grace is their time to finish;
 *   <li>a flush or compaction writes its file before its manifest names it: a file written to
 *       within the grace is never taken, however long the write takes;
 *   <li>a manifest being replaced as it is read names either the old or the new files; the new
 *       ones are young.
 * </ul>
 * A table with a tablet whose manifest cannot be read, or that the directory has and storage
 * has no manifest for yet (a new tablet, not yet opened), is skipped for that sweep: it may
 * name files nobody marked.
 *
 * <p>Only the master deletes a table's files (nodes that drop a deleted table's tablets close
 * them and delete nothing, so a node whose view lags can never delete a newer table's files).
 * Every file in the folder of a tablet the directory does not have is swept by the same rules:
 * a deleted table's files, and a split or merge parent's manifest once its children no longer
 * name its SSTables. Folders left empty go too. A table re-created under a deleted one's name
 * has new tablet ids, so new folders: the old ones go, the new ones stay.
 *
 * <p>Thread-safe: {@link #sweep} runs one at a time (it is synchronized) and blocks on file
 * I/O; the master runs it off its own thread.
 */
public final class FileSweeper {
  /** What one sweep did. */
  public record Result(int marked, int unmarked, List<String> deleted, List<String> tablesSkipped) {}

  private final Storage storage;
  private final Duration grace;
  private final LongSupplier nanoTime;
  private final LongSupplier wallMillis;
  /** Unmarked files, to when a sweep first found them so (nanoTime). Guarded by this. */
  private final Map<String, Long> unmarkedSince = new HashMap<>();

  public FileSweeper(Storage storage, Duration grace) {
    this(storage, grace, System::nanoTime, System::currentTimeMillis);
  }

  FileSweeper(Storage storage, Duration grace, LongSupplier nanoTime, LongSupplier wallMillis) {
    if (grace.isNegative()) {
      throw new IllegalArgumentException("the sweep's grace must not be negative, was " + grace);
    }
    this.storage = storage;
    this.grace = grace;
    this.nanoTime = nanoTime;
    this.wallMillis = wallMillis;
  }

  /**
   * One mark and sweep over {@code tablets}: each table the directory has, to the ids of its
   * tablets there. Files that fail to delete are left for the next sweep.
   */
  public synchronized Result sweep(Map<String, Set<String>> tablets) throws IOException {
    Set<String> marked = new HashSet<>();
    List<String> skipped = new ArrayList<>();
    List<String> unmarked = new ArrayList<>();
    for (String table : storage.list("tables")) {
      Set<String> ids = tablets.get(table);
      Set<String> inTable = ids == null ? Set.of() : mark(table, ids);
      if (inTable == null) {
        skipped.add(table);
        continue;
      }
      marked.addAll(inTable);
      String root = Storage.path("tables", table);
      for (String tablet : storage.list(root)) {
        String dir = Storage.path(root, tablet);
        boolean known = ids != null && ids.contains(tablet);
        for (String f : storage.list(dir)) {
          String path = Storage.path(dir, f);
          // A tablet the directory has keeps everything but unnamed SSTables; a folder of a
          // tablet it does not have (a deleted table's, a split or merge parent's) goes whole,
          // but for the SSTables a tablet it has still names.
          if (!inTable.contains(path) && (!known || f.endsWith(".sst"))) {
            unmarked.add(path);
          }
        }
      }
    }
    long now = nanoTime.getAsLong();
    unmarkedSince.keySet().retainAll(new HashSet<>(unmarked));
    List<String> deleted = new ArrayList<>();
    for (String path : unmarked) {
      long since = unmarkedSince.computeIfAbsent(path, p -> now);
      try {
        if (now - since >= grace.toNanos()
            && wallMillis.getAsLong() - storage.modifiedMillis(path) >= grace.toMillis()) {
          storage.delete(path);
          unmarkedSince.remove(path);
          deleted.add(path);
        }
      } catch (java.nio.file.NoSuchFileException gone) {
        unmarkedSince.remove(path); // deleted meanwhile (a dropped table's files, say)
      }
    }
    removeEmptyFolders(tablets);
    return new Result(marked.size(), unmarked.size(), deleted, skipped);
  }

  /** Removes tablet folders of tablets the directory does not have, and table folders of tables it does not have, once empty. */
  private void removeEmptyFolders(Map<String, Set<String>> tablets) throws IOException {
    for (String table : storage.list("tables")) {
      Set<String> ids = tablets.get(table);
      String root = Storage.path("tables", table);
      for (String tablet : storage.list(root)) {
        String dir = Storage.path(root, tablet);
        if ((ids == null || !ids.contains(tablet)) && storage.list(dir).isEmpty()) {
          deleteEmptyFolder(dir);
        }
      }
      if (ids == null && storage.list(root).isEmpty()) {
        deleteEmptyFolder(root);
      }
    }
  }

  /** Deletes {@code dir} if it is still empty: a node that writes into it meanwhile keeps it. */
  private void deleteEmptyFolder(String dir) {
    try {
      storage.delete(dir);
    } catch (IOException stillInUse) {
      // Not empty any more (or gone): the next sweep looks again.
    }
  }

  /** The files the manifests of {@code ids} name; null if one cannot be read or is missing. */
  private Set<String> mark(String table, Set<String> ids) {
    Set<String> files = new HashSet<>();
    for (String id : ids) {
      String dir = Tablet.dirOf(table, id);
      try {
        if (!ManifestCodec.exists(storage, dir)) {
          return null;
        }
        TabletManifest m = ManifestCodec.read(storage, dir);
        m.groups().values().forEach(refs -> refs.forEach(r -> files.add(r.path())));
      } catch (IOException | RuntimeException e) {
        return null;
      }
    }
    return files;
  }
}
