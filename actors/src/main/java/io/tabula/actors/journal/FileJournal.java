package io.tabula.actors.journal;

import io.tabula.persistence.journal.JournalRecord;
import io.tabula.persistence.journal.MasterJournal;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.Consumer;
import org.apache.pekko.actor.ActorRef;
import org.apache.pekko.persistence.AtomicWrite;
import org.apache.pekko.persistence.PersistentRepr;
import org.apache.pekko.persistence.journal.Tagged;
import org.apache.pekko.persistence.journal.japi.AsyncWriteJournal;
import org.apache.pekko.serialization.Serialization;
import org.apache.pekko.serialization.SerializationExtension;
import org.apache.pekko.serialization.Serializer;
import org.apache.pekko.serialization.Serializers;
import scala.concurrent.Future;
import scala.jdk.javaapi.CollectionConverters;
import scala.jdk.javaapi.FutureConverters;

/**
 * The Pekko Persistence journal plugin over the master's journal on the storage root ({@link
 * MasterJournals}): events are serialized here (with the serializer Pekko picks for them, Kryo
 * for Tabula's), written in one append per batch, and acknowledged only once the append is
 * durable and unfenced. An append that finds its epoch fenced fails the persist, so the master
 * that made it stops (docs/fencing.md). Tags are not kept (nothing queries by tag).
 *
 * <p>Runs as the plugin's actor; every call hands its I/O to the journal thread.
 */
public final class FileJournal extends AsyncWriteJournal {
  private final MasterJournals journals = MasterJournals.get(context().system());
  private final Serialization serialization = SerializationExtension.get(context().system());

  @Override
  public Future<Iterable<Optional<Exception>>> doAsyncWriteMessages(Iterable<AtomicWrite> messages) {
    List<JournalRecord> records = new ArrayList<>();
    List<Optional<Exception>> results = new ArrayList<>();
    for (AtomicWrite write : messages) {
      List<JournalRecord> batch = new ArrayList<>();
      try {
        for (PersistentRepr p : CollectionConverters.asJava(write.payload())) {
          Object payload = p.payload() instanceof Tagged t ? t.payload() : p.payload();
          Serializer s = serialization.findSerializerFor(payload);
          batch.add(new JournalRecord.Event(p.persistenceId(), p.sequenceNr(), p.writerUuid(), p.timestamp(),
              p.manifest(), s.identifier(), Serializers.manifestFor(s, payload), s.toBinary(payload)));
        }
        records.addAll(batch);
        results.add(Optional.empty());
      } catch (Exception e) {
        // Rejected: this write only, not stored (Pekko's contract for a write that cannot be
        // serialized). Exception, not a narrower type: Pekko's Scala serialization throws
        // checked exceptions it does not declare (NotSerializableException from
        // findSerializerFor), and a serializer may throw anything.
        results.add(Optional.of(e));
      }
    }
    return FutureConverters.asScala(journals.withCurrent(j -> {
      j.append(records);
      return (Iterable<Optional<Exception>>) results;
    }));
  }

  @Override
  public Future<Void> doAsyncDeleteMessagesTo(String persistenceId, long toSequenceNr) {
    return FutureConverters.asScala(journals.withCurrent(j -> {
      long to = Math.min(toSequenceNr, j.highestSequenceNr(persistenceId));
      j.append(List.of(new JournalRecord.DeleteEvents(persistenceId, to)));
      return null;
    }));
  }

  @Override
  public Future<Void> doAsyncReplayMessages(String persistenceId, long fromSequenceNr, long toSequenceNr, long max,
      Consumer<PersistentRepr> replayCallback) {
    return FutureConverters.asScala(journals.withCurrent(j -> {
      for (JournalRecord.Event e : j.events(persistenceId, fromSequenceNr, toSequenceNr, max)) {
        Object payload = serialization.deserialize(e.payload(), e.serializerId(), e.manifest()).get();
        replayCallback.accept(PersistentRepr.apply(payload, e.sequenceNr(), e.persistenceId(), e.adapterManifest(),
            false, ActorRef.noSender(), e.writerUuid()).withTimestamp(e.timestamp()));
      }
      return null;
    }));
  }

  @Override
  public Future<Long> doAsyncReadHighestSequenceNr(String persistenceId, long fromSequenceNr) {
    return FutureConverters.asScala(journals.withCurrent(j -> j.highestSequenceNr(persistenceId)));
  }
}
