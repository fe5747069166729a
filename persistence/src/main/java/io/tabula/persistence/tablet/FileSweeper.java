package io.tabula.persistence.tablet;

import io.tabula.persistence.backup.BackupExpiry;
import io.tabula.persistence.backup.BackupManifestCodec;
import io.tabula.persistence.changes.ChangeLog;
import io.tabula.persistence.storage.Storage;
import io.tabula.persistence.storage.WritableFile;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.UUID;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

/**
 * The master's mark-and-sweep of SSTables (paper §6): deletes the files that no tablet and no
 * backup references any more, such as the files a split or a merge left shared between
 * tablets, which no tablet owns and so none deletes when its compactions replace them.
 *
 * <p>Mark: the files named by the manifest of every tablet the master's directory has and by
 * every backup manifest (read from storage, which is the truth; the directory may lag a
 * flush). The marks are one set for every table: a table restored from a backup names files in
 * the folders of the table the backup was taken of. If any manifest cannot be read, the sweep
 * deletes nothing that time. A tablet that is gone from
 * the directory (the parent of a recorded split or merge) marks nothing, so its files go once
 * its children no longer name them. Sweep: the {@code .sst} files under those tables' folders
 * that nothing marked. A file is deleted only once it has been found unmarked by sweeps of one
 * master at least {@code grace} apart (by this process's monotonic clock) <em>and</em> was last
 * written more than {@code grace} ago by the storage's own clock (a file the sweep writes tells
 * it the storage's "now", so this machine's wall clock is never compared with the storage's):
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
 * <p>Nothing is deleted on stale marks. Before each batch of deletions (at most {@value
 * #BATCH} files of one table) the sweep
 * <ol>
 *   <li>marks again: re-reads the manifests of that table's tablets in the master's directory
 *       <em>as it is now</em>, and keeps every file they name, and every file in the folder of a
 *       tablet the directory has now but for unnamed SSTables (a pause between marking and
 *       deleting, while a compaction committed or a split was recorded, changes nothing);
 *   <li>stops if it has run longer than a quarter of the grace since it began (its listing and
 *       its marks are that old);
 *   <li>stops unless the master's {@link MasterCheck} says this node is still the master now.
 * </ol>
 * The marks between sweeps ({@link Marks}) belong to one master: a new master starts its own,
 * so its grace starts afresh.
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
  /** How one sweep ended. */
  public enum Outcome {
    /** Every file due was judged: deleted, or kept because it is named again or young. */
    FINISHED,
    /** Before a batch of deletions the master's check said this node is not the master now: nothing more went. */
    NOT_MASTER,
    /** Before a batch of deletions the sweep had run longer than a quarter of the grace: its marks were too old. */
    TOO_SLOW
  }

  /** What one sweep did. */
  public record Result(int marked, int unmarked, List<String> deleted, List<String> tablesSkipped,
      Outcome outcome) {}

  /** Asked right before each batch of deletions; the master's side implements it. */
  @FunctionalInterface
  public interface MasterCheck {
    /**
     * Whether this node's master is still the master now: it holds the master lease, and no
     * newer master has fenced its journal. False stops the sweep.
     */
    boolean stillMaster();
  }

  /**
   * What one master's sweeps remember between them: each file found unmarked, to when a sweep
   * first found it so (the sweeper's monotonic clock). A master makes its own when it starts and
   * never hands it on, so a file's grace never began under an earlier master. Used by one sweep
   * at a time (the sweeper's lock).
   */
  public static final class Marks {
    private final Map<String, Long> unmarkedSince = new HashMap<>();
  }

  /** The most files deleted after one look at the master's check and one re-marking. */
  static final int BATCH = 100;
  /** Where the sweep writes the file whose modification time is the storage's "now". */
  static final String CLOCK_DIR = "master";

  private final Storage storage;
  private final Duration grace;
  private final LongSupplier nanoTime;

  public FileSweeper(Storage storage, Duration grace) {
    this(storage, grace, System::nanoTime);
  }

  FileSweeper(Storage storage, Duration grace, LongSupplier nanoTime) {
    if (grace.isNegative()) {
      throw new IllegalArgumentException("the sweep's grace must not be negative, was " + grace);
    }
    this.storage = storage;
    this.grace = grace;
    this.nanoTime = nanoTime;
  }

  /** A file under {@code tables/}: its table, its tablet's folder name and its path. */
  private record Candidate(String table, String tablet, String path) {}

  /**
   * One mark and sweep for the master whose sweeps remember {@code marks}: {@code directory}
   * gives each table of the master's directory, to the ids of its tablets there, as it is when
   * asked (the sweep asks at its start and again before each batch of deletions), and {@code
   * master} whether this node is still the master. Files that fail to delete are left for the
   * next sweep.
   */
  public synchronized Result sweep(Marks marks, Supplier<Map<String, Set<String>>> directory, MasterCheck master)
      throws IOException {
    long started = nanoTime.getAsLong();
    Map<String, Set<String>> tablets = directory.get();
    Set<String> marked = new HashSet<>();
    Set<String> foreignNamers = new HashSet<>();
    for (Map.Entry<String, Set<String>> t : tablets.entrySet()) {
      Set<String> inTable = mark(t.getKey(), t.getValue());
      if (inTable == null) {
        // Its tablets may name any table's files (a restored table names its backup's): none is swept now.
        return new Result(0, 0, List.of(), List.copyOf(storage.list("tables")), Outcome.FINISHED);
      }
      marked.addAll(inTable);
      if (namesForeign(t.getKey(), inTable)) {
        foreignNamers.add(t.getKey());
      }
    }
    Set<String> backedUp = backupMarks();
    if (backedUp == null) {
      return new Result(0, 0, List.of(), List.copyOf(storage.list("tables")), Outcome.FINISHED);
    }
    marked.addAll(backedUp);
    List<String> skipped = new ArrayList<>();
    List<Candidate> unmarked = new ArrayList<>();
    long sweepNow = -1; // the storage's clock, read when first needed
    for (String table : storage.list("tables")) {
      Set<String> ids = tablets.get(table);
      String root = Storage.path("tables", table);
      for (String tablet : storage.list(root)) {
        String dir = Storage.path(root, tablet);
        List<String> entries = storage.list(dir);
        boolean changesKept = false;
        if (ids != null && !ids.contains(tablet) && entries.contains(ChangeLog.FOLDER)) {
          sweepNow = sweepNow < 0 ? storageNow() : sweepNow;
          changesKept = changesYoung(ChangeLog.folder(dir), sweepNow);
        }
        for (String f : entries) {
          Candidate c = new Candidate(table, tablet, Storage.path(dir, f));
          if (unreferenced(c, ids, marked) && !(changesKept && !f.endsWith(".sst"))) {
            unmarked.add(c);
          }
        }
      }
    }
    long now = nanoTime.getAsLong();
    Set<String> unmarkedPaths = new HashSet<>();
    unmarked.forEach(c -> unmarkedPaths.add(c.path()));
    marks.unmarkedSince.keySet().retainAll(unmarkedPaths);
    Map<String, List<Candidate>> due = new TreeMap<>();
    for (Candidate c : unmarked) {
      if (now - marks.unmarkedSince.computeIfAbsent(c.path(), p -> now) >= grace.toNanos()) {
        due.computeIfAbsent(c.table(), t -> new ArrayList<>()).add(c);
      }
    }
    Pass pass = new Pass(marks, directory, master, started, tablets.keySet(), foreignNamers);
    Outcome outcome = pass.deleteDue(due, skipped);
    if (outcome == Outcome.FINISHED) {
      outcome = pass.checks();
      if (outcome == Outcome.FINISHED) {
        removeEmptyFolders(directory.get());
      }
    }
    return new Result(marked.size(), unmarked.size(), pass.deleted, skipped, outcome);
  }

  /**
   * Whether {@code c} is garbage by the marks {@code named} of its table's tablets {@code ids}
   * (null: a table the directory does not have): a tablet the directory has keeps everything
   * but unnamed SSTables; a folder of a tablet it does not have (a deleted table's, a split or
   * merge parent's) goes whole, but for the SSTables a tablet it has still names.
   */
  private static boolean unreferenced(Candidate c, Set<String> ids, Set<String> named) {
    boolean known = ids != null && ids.contains(c.tablet());
    return !named.contains(c.path()) && (!known || c.path().endsWith(".sst"));
  }

  /**
   * Whether a change log was written to within the longest retention (and the grace) by the
   * storage's clock: a split or merge parent's change log, and the manifest that names its
   * children, stay while a change stream may still read them (docs/change-streams.md).
   */
  private boolean changesYoung(String folder, long storageNow) throws IOException {
    return storageNow - storage.modifiedMillis(folder) < MAX_CHANGE_RETENTION.plus(grace).toMillis();
  }

  /** The longest change-stream retention a table may have (Cloud Bigtable's: 7 days). */
  public static final Duration MAX_CHANGE_RETENTION = Duration.ofDays(7);

  /** The deleting part of one sweep, and what it deleted. */
  private final class Pass {
    private final Marks marks;
    private final Supplier<Map<String, Set<String>>> directory;
    private final MasterCheck master;
    private final long started;
    /** The tables of the directory when the sweep began. */
    private final Set<String> tablesAtStart;
    /** Those whose manifests named files in another table's folders then (restored tables). */
    private final Set<String> foreignNamers;
    private final List<String> deleted = new ArrayList<>();

    Pass(Marks marks, Supplier<Map<String, Set<String>>> directory, MasterCheck master, long started,
        Set<String> tablesAtStart, Set<String> foreignNamers) {
      this.marks = marks;
      this.directory = directory;
      this.master = master;
      this.started = started;
      this.tablesAtStart = Set.copyOf(tablesAtStart);
      this.foreignNamers = Set.copyOf(foreignNamers);
    }

    /** Deletes what is due, table by table, a batch at a time (see the class comment); adds to {@code skipped}. */
    Outcome deleteDue(Map<String, List<Candidate>> due, List<String> skipped) throws IOException {
      if (due.isEmpty()) {
        return Outcome.FINISHED;
      }
      // Taken once: a "now" that grows older as the sweep goes on only makes files look younger.
      long storageNow = storageNow();
      for (Map.Entry<String, List<Candidate>> table : due.entrySet()) {
        List<Candidate> all = table.getValue();
        for (int from = 0; from < all.size(); from += BATCH) {
          List<Candidate> old = olderThanGrace(all.subList(from, Math.min(all.size(), from + BATCH)), storageNow);
          if (old.isEmpty()) {
            continue;
          }
          List<Candidate> garbage = markAgain(table.getKey(), old);
          if (garbage == null) {
            skipped.add(table.getKey());
            break;
          }
          Outcome checked = checks();
          if (checked != Outcome.FINISHED) {
            return checked;
          }
          for (Candidate c : garbage) {
            if (c.path().endsWith("/" + ChangeLog.FOLDER)) {
              ChangeLog.deleteAll(storage, c.path());
            } else {
              storage.delete(c.path());
            }
            marks.unmarkedSince.remove(c.path());
            deleted.add(c.path());
          }
        }
      }
      return Outcome.FINISHED;
    }

    /** Whether the sweep may go on deleting: its marks are young enough and this node is still the master. */
    Outcome checks() {
      if (nanoTime.getAsLong() - started > grace.toNanos() / 4) {
        return Outcome.TOO_SLOW;
      }
      return master.stillMaster() ? Outcome.FINISHED : Outcome.NOT_MASTER;
    }

    /** Those of {@code batch} last written at least the grace before {@code storageNow}, by the storage's clock. */
    private List<Candidate> olderThanGrace(List<Candidate> batch, long storageNow) throws IOException {
      List<Candidate> old = new ArrayList<>();
      for (Candidate c : batch) {
        try {
          if (storageNow - storage.modifiedMillis(c.path()) >= grace.toMillis()) {
            old.add(c);
          }
        } catch (java.nio.file.NoSuchFileException gone) {
          marks.unmarkedSince.remove(c.path()); // deleted meanwhile (a dropped table's files, say)
        }
      }
      return old;
    }

    /**
     * Those of {@code batch} that are still garbage by the manifests, read again, of every
     * tablet in the directory as it is now that could name them: {@code table}'s own, those of
     * tables that named other tables' files when the sweep began, those of tables made since
     * (a restore), and every backup's; null if one cannot be read or is missing. A table that
     * named only its own files cannot come to name another's: only a new table starts with
     * files it did not write.
     */
    private List<Candidate> markAgain(String table, List<Candidate> batch) throws IOException {
      Map<String, Set<String>> now = directory.get();
      Set<String> ids = now.get(table);
      Set<String> again = new java.util.TreeSet<>(foreignNamers);
      again.add(table);
      now.keySet().stream().filter(t -> !tablesAtStart.contains(t)).forEach(again::add);
      Set<String> named = new HashSet<>();
      for (String t : again) {
        Set<String> inTable = now.containsKey(t) ? mark(t, now.get(t)) : Set.of();
        if (inTable == null) {
          return null;
        }
        named.addAll(inTable);
      }
      Set<String> backedUp = backupMarks();
      if (backedUp == null) {
        return null;
      }
      named.addAll(backedUp);
      List<Candidate> garbage = new ArrayList<>();
      for (Candidate c : batch) {
        if (unreferenced(c, ids, named)) {
          garbage.add(c);
        }
      }
      return garbage;
    }
  }

  /**
   * The storage's clock now: the modification time of a file written for the purpose (then
   * deleted), so that file ages are differences of one clock's readings.
   */
  private long storageNow() throws IOException {
    String probe = Storage.path(CLOCK_DIR, "sweep-clock-" + UUID.randomUUID());
    try (WritableFile f = storage.create(probe)) {
      f.append(new byte[] {0});
    }
    try {
      return storage.modifiedMillis(probe);
    } finally {
      storage.delete(probe);
    }
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

  /**
   * Deletes the backups whose expiry is before {@code nowMicros} (the master's clock; µs since
   * the epoch), and the folders of backups never finished (no manifest) last written more than
   * a day ago by the storage's clock: their manifest first, so from then on they name no file,
   * then the rest of the folder. The next sweeps collect their files once nothing else names
   * them. Asks the master's check before each backup. A backup that cannot be judged or deleted
   * (a damaged expiry, a stray file, a delete racing this one) keeps no other from expiring: it
   * is looked at again next time, and named in what this returns.
   */
  public synchronized Expired expireBackups(long nowMicros, MasterCheck master) throws IOException {
    List<String> deleted = new ArrayList<>();
    List<String> problems = new ArrayList<>();
    long storageNow = -1;
    for (String id : storage.list(BackupManifestCodec.FOLDER)) {
      String dir = BackupManifestCodec.folder(id);
      try {
        if (!storage.exists(dir) || storage.exists(BackupManifestCodec.path(id))
            ? !expired(id, nowMicros) : !abandoned(dir, storageNow < 0 ? (storageNow = storageNow()) : storageNow)) {
          continue;
        }
        if (!master.stillMaster()) {
          break;
        }
        deleteBackup(id);
        deleted.add(id);
      } catch (IOException e) {
        problems.add(id + ": " + e);
      }
    }
    return new Expired(deleted, problems);
  }

  /** What {@link #expireBackups} did: the backups deleted, and those it could not judge or delete, each with why. */
  public record Expired(List<String> deleted, List<String> problems) {}

  /** Whether backup {@code id}, which has a manifest, expired before {@code nowMicros}. */
  private boolean expired(String id, long nowMicros) throws IOException {
    try {
      return BackupExpiry.read(storage, id).expiry().expireMicros() < nowMicros;
    } catch (java.nio.file.NoSuchFileException noExpiry) {
      return false; // deleted meanwhile (a backup's expiry is written before its manifest)
    }
  }

  /** Whether {@code dir}, a backup folder without a manifest, was last written more than a day before {@code storageNow}. */
  private boolean abandoned(String dir, long storageNow) throws IOException {
    for (String f : storage.list(dir)) {
      if (storageNow - storage.modifiedMillis(Storage.path(dir, f)) <= UNFINISHED_BACKUP_MILLIS) {
        return false;
      }
    }
    return true;
  }

  /** A backup folder without a manifest older than this was never finished. */
  static final long UNFINISHED_BACKUP_MILLIS = 24L * 3600 * 1000;

  /** Deletes backup {@code id}: its manifest first, then the rest of its folder. */
  private void deleteBackup(String id) throws IOException {
    BackupManifestCodec.deleteContents(storage, id);
    deleteEmptyFolder(BackupManifestCodec.folder(id));
  }

  /** Whether {@code named}, the files {@code table}'s manifests name, include one in another table's folders. */
  private static boolean namesForeign(String table, Set<String> named) {
    String own = Storage.path("tables", table) + "/";
    return named.stream().anyMatch(p -> !p.startsWith(own));
  }

  /**
   * Every file a backup manifest names (docs/backups.md); null if one cannot be read. A
   * backup's folder without a manifest is a backup being made, whose files its tablets have
   * disowned, so no tablet deletes them, and which is written within a quarter of the grace of
   * its first listing (or given up), so no sweep finds them unmarked for a whole grace first.
   */
  private Set<String> backupMarks() {
    Set<String> files = new HashSet<>();
    try {
      for (String id : BackupManifestCodec.ids(storage)) {
        files.addAll(BackupManifestCodec.read(storage, id).paths());
      }
    } catch (IOException e) {
      return null;
    }
    return files;
  }

  /**
   * The files the manifests of {@code ids} name; null if one cannot be read, or is missing from
   * a tablet folder that exists (its first manifest may be being written). A tablet without a
   * folder never opened (a tablet opens at its first request: docs/cluster.md), so names no
   * file; one that opens after this look starts with a manifest that names none.
   */
  private Set<String> mark(String table, Set<String> ids) {
    Set<String> files = new HashSet<>();
    for (String id : ids) {
      String dir = Tablet.dirOf(table, id);
      try {
        if (!ManifestCodec.exists(storage, dir)) {
          if (!storage.exists(dir)) {
            continue;
          }
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
