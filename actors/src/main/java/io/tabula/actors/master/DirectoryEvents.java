package io.tabula.actors.master;

import io.tabula.actors.master.Master.Event;
import io.tabula.actors.master.Master.FamiliesChanged;
import io.tabula.actors.master.Master.MergeAbandoned;
import io.tabula.actors.master.Master.MergeStarted;
import io.tabula.actors.master.Master.MoveFinished;
import io.tabula.actors.master.Master.MoveHandedOver;
import io.tabula.actors.master.Master.MoveStarted;
import io.tabula.actors.master.Master.TableCreated;
import io.tabula.actors.master.Master.TableDeleted;
import io.tabula.actors.master.Master.TabletClosed;
import io.tabula.actors.master.Master.TabletFilesRecorded;
import io.tabula.actors.master.Master.TabletOpened;
import io.tabula.actors.master.Master.TabletSplit;
import io.tabula.actors.master.Master.TabletsAssigned;
import io.tabula.actors.master.Master.TabletsMerged;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Function;

/** How each of the master's events changes its {@link Directory}: pure, so replaying the journal gives the same directory. */
final class DirectoryEvents {
  private DirectoryEvents() {}

  /** The directory after {@code e}. */
  static Directory apply(Directory d, Event e) {
    if (e instanceof TableCreated x) {
      return d.withTable(x.table(), x.tablets(), x.nextTabletNumber());
    } else if (e instanceof Master.LegacyTableCreated x) {
      return apply(d, x.upgrade());
    } else if (e instanceof Master.LocalityGroupsChanged x) {
      return d.withTableInfo(d.table(x.table()).withGroups(x.families(), x.groups(), x.familyGroups()));
    } else if (e instanceof Master.AccessChanged x) {
      return d.withTableInfo(d.table(x.table()).withAccess(x.access()));
    } else if (e instanceof Master.OptionsChanged x) {
      return d.withTableInfo(d.table(x.table()).withOptions(x.options()));
    } else if (e instanceof TableDeleted x) {
      return d.withoutTable(x.name());
    } else if (e instanceof FamiliesChanged x) {
      return d.withTableInfo(d.table(x.table()).withFamilies(x.families()));
    } else if (e instanceof Master.FamiliesSet x) {
      return d.withTableInfo(d.table(x.table()).withFamilies(x.families(), x.aggregates()));
    } else if (e instanceof TabletSplit x) {
      return applySplit(d, x);
    } else if (e instanceof TabletFilesRecorded x) {
      return applyFiles(d, x);
    } else if (e instanceof TabletsAssigned x) {
      return d.withPlacements(changed(d, x.owners().keySet(),
          id -> d.placementOf(id).servedBy(x.owners().get(id))));
    } else if (e instanceof MoveStarted x) {
      return d.withPlacements(changed(d, List.of(x.tabletId()),
          id -> d.placementOf(id).preparing(x.to())));
    } else if (e instanceof MoveHandedOver x) {
      return d.withPlacements(changed(d, List.of(x.tabletId()),
          id -> d.placementOf(id).handedTo(x.to())));
    } else if (e instanceof MoveFinished x) {
      return d.withPlacements(changed(d, List.of(x.tabletId()),
          id -> d.placementOf(id).settled()));
    } else if (e instanceof TabletOpened x) {
      return d.withPlacements(changed(d, List.of(x.tabletId()),
          id -> d.placementOf(id).withLogs(x.log(), x.recovered())));
    } else if (e instanceof Master.TabletsOpened x) {
      Directory out = d;
      for (TabletOpened o : x.opened()) {
        out = apply(out, o);
      }
      return out;
    } else if (e instanceof TabletClosed x) {
      return d.withPlacements(changed(d, List.of(x.tabletId()),
          id -> d.placementOf(id).withLogs("", List.of(x.log()))));
    } else if (e instanceof MergeStarted x) {
      return d.withPlacements(changed(d, List.of(x.leftId(), x.rightId()),
          id -> d.placementOf(id).merging(x.childId())));
    } else if (e instanceof MergeAbandoned x) {
      return d.withPlacements(changed(d, List.of(x.leftId(), x.rightId()),
          id -> d.placementOf(id).settled()));
    } else if (e instanceof TabletsMerged x) {
      return applyMerge(d, x);
    }
    throw new IllegalArgumentException("not a master event: " + e);
  }

  /** The new placements of those of {@code ids} the directory has as tablets. */
  private static Map<String, TabletPlacement> changed(Directory d, Collection<String> ids,
      Function<String, TabletPlacement> f) {
    Map<String, TabletPlacement> out = new TreeMap<>();
    for (String id : ids) {
      if (d.tablet(id) != null) {
        out.put(id, f.apply(id));
      }
    }
    return out;
  }

  private static Directory applyFiles(Directory d, TabletFilesRecorded e) {
    TabletInfo t = d.tablet(e.table(), e.tabletId());
    return t == null ? d.bumped() : d.withTabletUpdated(e.table(), t.id(), t.withFiles(e.files(), e.redoPoint()));
  }

  private static Directory applyMerge(Directory d, TabletsMerged e) {
    TabletInfo left = d.tablet(e.table(), e.leftId());
    TabletInfo right = d.tablet(e.table(), e.rightId());
    if (left == null || right == null) {
      return d.bumped();
    }
    Map<String, List<String>> files = new TreeMap<>();
    for (TabletInfo parent : List.of(left, right)) {
      parent.files().forEach((g, l) -> files.computeIfAbsent(g, k -> new ArrayList<>()).addAll(l));
    }
    TabletInfo child = new TabletInfo(e.table(), e.childId(), left.startRow(), right.endRow(), files,
        Math.max(left.redoPoint(), right.redoPoint()));
    TabletPlacement l = d.placementOf(e.leftId());
    List<String> logs = new ArrayList<>(l.logs());
    logs.addAll(d.placementOf(e.rightId()).logs());
    return d.withTabletsMerged(e.table(), e.leftId(), e.rightId(), child,
        new TabletPlacement(l.owner(), TabletPlacement.State.SERVING, "", logs));
  }

  private static Directory applySplit(Directory d, TabletSplit e) {
    TabletInfo parent = d.tablet(e.table(), e.parentId());
    if (parent == null) {
      return d.bumped();
    }
    TabletInfo left = new TabletInfo(e.table(), e.leftId(), parent.startRow(), e.splitRow(), parent.files(),
        parent.redoPoint());
    TabletInfo right = new TabletInfo(e.table(), e.rightId(), e.splitRow(), parent.endRow(), parent.files(),
        parent.redoPoint());
    // The children start where the parent was served, and no log names them: a log's records are
    // by tablet id, so none holds a child's record before the child opens, and the split flushed
    // the parent first. (Naming the parent's logs made a child's next owner wait for, then fence,
    // the live node that split the parent, which never opens the child when a move was handed
    // over meanwhile.)
    return d.withTabletReplaced(e.table(), e.parentId(), List.of(left, right),
        new TabletPlacement(d.ownerOf(e.parentId()), TabletPlacement.State.SERVING, "", List.of()));
  }
}
