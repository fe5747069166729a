package io.tabula.actors.journal;

import io.tabula.persistence.journal.JournalRecord;
import java.util.List;
import java.util.Optional;
import org.apache.pekko.persistence.SelectedSnapshot;
import org.apache.pekko.persistence.SnapshotMetadata;
import org.apache.pekko.persistence.SnapshotSelectionCriteria;
import org.apache.pekko.persistence.snapshot.japi.SnapshotStore;
import org.apache.pekko.serialization.Serialization;
import org.apache.pekko.serialization.SerializationExtension;
import org.apache.pekko.serialization.Serializer;
import org.apache.pekko.serialization.Serializers;
import scala.concurrent.Future;
import scala.jdk.javaapi.FutureConverters;

/**
 * The Pekko Persistence snapshot plugin over the master's journal ({@link MasterJournals}):
 * snapshots are records in the same journal as the events, so a snapshot that a fenced master
 * wrote after the newer one read is no more part of the history than its events are. Loading a
 * snapshot is the first step of a recovery: it opens the journal as a new epoch.
 */
public final class FileSnapshotStore extends SnapshotStore {
  private final MasterJournals journals = MasterJournals.get(context().system());
  private final Serialization serialization = SerializationExtension.get(context().system());

  @Override
  public Future<Optional<SelectedSnapshot>> doLoadAsync(String persistenceId, SnapshotSelectionCriteria criteria) {
    return FutureConverters.asScala(journals.withRecovered(j -> {
      Optional<JournalRecord.Snapshot> s = j.latestSnapshot(persistenceId, criteria.minSequenceNr(),
          criteria.maxSequenceNr(), criteria.minTimestamp(), criteria.maxTimestamp());
      if (s.isEmpty()) {
        return Optional.<SelectedSnapshot>empty();
      }
      JournalRecord.Snapshot snap = s.get();
      Object state = serialization.deserialize(snap.payload(), snap.serializerId(), snap.manifest()).get();
      return Optional.of(SelectedSnapshot.create(new SnapshotMetadata(persistenceId, snap.sequenceNr(),
          snap.timestamp()), state));
    }));
  }

  /**
   * Appends the snapshot and, in the same write, the deletion of every older snapshot of its
   * persistence id but the newest one: the journal holds (in memory too) at most two. Pekko's
   * retention deletes old snapshots only at its own snapshots, and the master takes others
   * between (its {@code SnapshotSpacing}); the events after the older kept snapshot stay, since
   * the retention deletes events only further back.
   */
  @Override
  public Future<Void> doSaveAsync(SnapshotMetadata metadata, Object snapshot) {
    Serializer s = serialization.findSerializerFor(snapshot);
    String id = metadata.persistenceId();
    JournalRecord record = new JournalRecord.Snapshot(id, metadata.sequenceNr(),
        metadata.timestamp(), s.identifier(), Serializers.manifestFor(s, snapshot), s.toBinary(snapshot));
    return FutureConverters.asScala(journals.withCurrent(j -> {
      Optional<JournalRecord.Snapshot> previous = j.latestSnapshot(id, 0, metadata.sequenceNr() - 1, 0,
          Long.MAX_VALUE);
      if (previous.isPresent() && previous.get().sequenceNr() > 0) {
        j.append(List.of(record, new JournalRecord.DeleteSnapshots(id, 0, previous.get().sequenceNr() - 1, 0,
            Long.MAX_VALUE)));
      } else {
        j.append(List.of(record));
      }
      return null;
    }));
  }

  @Override
  public Future<Void> doDeleteAsync(SnapshotMetadata metadata) {
    long ts = metadata.timestamp();
    return append(new JournalRecord.DeleteSnapshots(metadata.persistenceId(), metadata.sequenceNr(),
        metadata.sequenceNr(), ts == 0 ? 0 : ts, ts == 0 ? Long.MAX_VALUE : ts));
  }

  @Override
  public Future<Void> doDeleteAsync(String persistenceId, SnapshotSelectionCriteria criteria) {
    return append(new JournalRecord.DeleteSnapshots(persistenceId, criteria.minSequenceNr(),
        criteria.maxSequenceNr(), criteria.minTimestamp(), criteria.maxTimestamp()));
  }

  private Future<Void> append(JournalRecord record) {
    return FutureConverters.asScala(journals.withCurrent(j -> {
      j.append(List.of(record));
      return null;
    }));
  }
}
