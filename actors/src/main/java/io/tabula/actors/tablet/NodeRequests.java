package io.tabula.actors.tablet;

import io.tabula.actors.Refusals;
import io.tabula.actors.Stages;
import io.tabula.persistence.model.RowMutation;
import io.tabula.persistence.storage.Storage;
import io.tabula.persistence.wal.LogPieces;
import io.tabula.protocol.errors.ErrorCode;
import io.tabula.protocol.errors.Refusal;
import io.tabula.protocol.kryo.KryoSerializable;
import io.tabula.streams.filter.FilteredRow;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.function.Function;
import java.util.function.Supplier;
import org.apache.pekko.Done;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.DispatcherSelector;
import org.apache.pekko.actor.typed.RecipientRef;
import org.apache.pekko.actor.typed.javadsl.AskPattern;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.actor.typed.receptionist.Receptionist;
import org.apache.pekko.actor.typed.receptionist.ServiceKey;
import org.apache.pekko.pattern.StatusReply;

/**
 * Another node's requests for this node's tablets, one message per client request and node:
 * a node that receives a read of keys, or a MutateRows, spanning tablets of several nodes
 * sends each other node one {@link Read} or {@link Write} for all of that node's tablets,
 * instead of one sharded ask per tablet, and gets one answer. A message between nodes costs
 * far more than reading or writing a few rows, so their number is what a request spread over
 * nodes costs.
 *
 * <p>Reads are served from the node's {@link LocalTablets}, as its own gRPC layer serves
 * them, on the blocking-I/O dispatcher; a part for a tablet not served here now (moved,
 * split, merged, not yet open) is refused as {@link ErrorCode#MOVED}, and the asking node
 * then reads it through the tablet's sharded actor. Writes go to each tablet's sharded actor
 * from here (a local hop while the tablet is here; sharding follows it when it has moved),
 * so they are ordered and held exactly as writes sent to the actor directly.
 *
 * <p>Every node runs one, registered with the receptionist under {@link #KEY}.
 */
public final class NodeRequests {
  /** The key under which each node's instance is registered. */
  public static final ServiceKey<Command> KEY = ServiceKey.create(Command.class, "tabula-node-requests");

  /** What another node asks. */
  public sealed interface Command extends KryoSerializable permits Read, Write, SortPiece, Holds {}

  /** The keys of one tablet to read, in the order they are wanted. */
  public record Part(String tabletId, List<byte[]> keys) implements KryoSerializable {}

  /** Reads {@code parts}, each with the serialized {@code filter}, and answers one {@link ReadAnswer}. */
  public record Read(List<Part> parts, byte[] filter, ActorRef<ReadAnswer> replyTo) implements Command {}

  /**
   * Per part, in the order asked: its rows (those with cells passing the filter, in the
   * order asked) and a null refusal, or no rows and why the part was not read.
   *
   * <p>An answer carries about {@link #ANSWER_BYTES} of rows at most, so it fits the cluster
   * transport's frame: the parts before {@code complete} are answered whole; when
   * {@code complete} is less than the number of parts, part {@code complete} is answered for
   * its keys before {@code nextKey}, and the parts after it are not read (no rows, no
   * refusal). The asker asks again for the rest. An answer always holds at least one row or
   * one whole part.
   */
  public record ReadAnswer(List<List<FilteredRow>> rows, List<Refusal> refusals, int complete, int nextKey)
      implements KryoSerializable {}

  /**
   * Most bytes of rows one {@link ReadAnswer} carries (a single larger row goes alone): half
   * the cluster transport's frame ({@code pekko.remote.artery.advanced.maximum-frame-size},
   * 1 MiB in tabula-node.conf), which drops a larger message.
   */
  public static final long ANSWER_BYTES = 512 * 1024;

  /**
   * Most tablets one write request asks at a time, on the node that took the request and on
   * each node it sends a share to ({@link Stages#atMost}): a write to thousands of tablets
   * (each one's first, so each opens) otherwise queues thousands of openings ahead of every
   * other client's call. 32 asks in flight keep both cores and the disk busy while the
   * tablets open.
   */
  public static final int TABLETS_AT_ONCE = 32;

  /** Row mutations for one tablet. */
  public record Batch(String tabletId, List<RowMutation> mutations) implements KryoSerializable {}

  /** Applies each batch through its tablet's actor and answers one {@link WriteAnswer}. */
  public record Write(List<Batch> batches, ActorRef<WriteAnswer> replyTo) implements Command {}

  /**
   * Per batch, in the order asked: its tablet's outcome (per row: applied or refused) and a
   * null refusal, or a null outcome and why the batch as a whole failed.
   */
  public record WriteAnswer(List<TabletActor.BatchOutcome> outcomes, List<Refusal> refusals)
      implements KryoSerializable {}

  /**
   * Sorts segment {@code segment} of the fenced commit-log folder {@code dir} into its recovery
   * piece ({@link LogPieces}), unless it is there already; answers once it is. The master sends
   * these across the live nodes when it has fenced a dead node's log, before it places the
   * dead node's tablets.
   */
  public record SortPiece(String dir, String segment, ActorRef<StatusReply<Done>> replyTo) implements Command {}

  /**
   * Does this node hold tablet {@code tabletId} open (its storage engine has it)? The master
   * asks before a tablet opens elsewhere when this node's log is named in the tablet's
   * placement and it reported no close: a node that does not hold it serves it no more, and
   * acknowledged every write of it before it closed it (docs/fencing.md, "Before a tablet
   * opens"). Answered with a {@link Holding}.
   */
  public record Holds(String tabletId, ActorRef<Holding> replyTo) implements Command {}

  /** Whether this node held tablet {@code tabletId} open when asked. */
  public record Holding(String tabletId, boolean open) implements KryoSerializable {}

  private NodeRequests() {}

  /**
   * This node's instance, registered under {@link #KEY}.
   *
   * @param tablets a tablet's sharded actor by tablet id
   * @param askTimeout how long a tablet's actor may take to answer a batch
   */
  public static Behavior<Command> create(LocalTablets local, Function<String, RecipientRef<TabletActor.Command>> tablets,
      Duration askTimeout, Storage storage) {
    return create(local, tablets, askTimeout, storage, id -> true);
  }

  /**
   * This node's instance, registered under {@link #KEY}.
   *
   * @param tablets a tablet's sharded actor by tablet id
   * @param askTimeout how long a tablet's actor may take to answer a batch
   * @param open whether this node's storage engine holds a tablet open, by tablet id
   */
  public static Behavior<Command> create(LocalTablets local, Function<String, RecipientRef<TabletActor.Command>> tablets,
      Duration askTimeout, Storage storage, java.util.function.Predicate<String> open) {
    return Behaviors.setup(ctx -> {
      ctx.getSystem().receptionist().tell(Receptionist.register(KEY, ctx.getSelf()));
      Executor blockingIo = ctx.getSystem().dispatchers().lookup(DispatcherSelector.blocking());
      return Behaviors.receiveMessage(command -> {
        if (command instanceof Read r) {
          blockingIo.execute(() -> r.replyTo().tell(read(local, r)));
        } else if (command instanceof Write w) {
          write(tablets, w, askTimeout, ctx.getSystem());
        } else if (command instanceof Holds h) {
          h.replyTo().tell(new Holding(h.tabletId(), open.test(h.tabletId())));
        } else if (command instanceof SortPiece sort) {
          blockingIo.execute(() -> {
            try {
              LogPieces.sortSegment(storage, sort.dir(), sort.segment());
              sort.replyTo().tell(StatusReply.ack());
            } catch (java.io.IOException | RuntimeException e) {
              // The master logs it; the tablets that need the piece sort it themselves.
              sort.replyTo().tell(StatusReply.error("sorting " + sort.dir() + "/" + sort.segment() + " failed: " + e));
            }
          });
        }
        return Behaviors.same();
      });
    });
  }

  /**
   * Reads the parts of {@code read} here, now, in order, until the answer holds
   * {@link #ANSWER_BYTES} of rows; a part that cannot be read is refused alone.
   */
  static ReadAnswer read(LocalTablets local, Read read) {
    List<Part> parts = read.parts();
    List<List<FilteredRow>> rows = new ArrayList<>(parts.size());
    List<Refusal> refusals = new ArrayList<>(parts.size());
    long bytes = 0;
    int complete = parts.size();
    int nextKey = 0;
    for (int p = 0; p < parts.size(); p++) {
      Part part = parts.get(p);
      if (complete < parts.size() || bytes >= ANSWER_BYTES) {
        complete = Math.min(complete, p);
        rows.add(List.of());
        refusals.add(null);
        continue;
      }
      TabletReads reads = local.reads(part.tabletId());
      List<FilteredRow> found = List.of();
      Refusal refused = null;
      if (reads == null) {
        refused = Refusal.of(ErrorCode.MOVED, "tablet " + part.tabletId() + " is not served by this node now");
      } else {
        try {
          found = reads.rows(part.keys(), read.filter());
        } catch (RuntimeException e) {
          refused = TabletReads.failure(e);
        }
      }
      for (int r = 0; r < found.size(); r++) {
        long size = found.get(r).approximateBytes();
        if (bytes > 0 && bytes + size > ANSWER_BYTES) {
          complete = p;
          nextKey = indexOf(part.keys(), found.get(r).key());
          found = new ArrayList<>(found.subList(0, r));
          break;
        }
        bytes += size;
      }
      rows.add(found);
      refusals.add(refused);
    }
    return new ReadAnswer(rows, refusals, complete, nextKey);
  }

  /** Where {@code key} is in {@code keys} (it is: rows answer keys asked). */
  private static int indexOf(List<byte[]> keys, byte[] key) {
    for (int i = 0; i < keys.size(); i++) {
      if (Arrays.equals(keys.get(i), key)) {
        return i;
      }
    }
    throw new IllegalStateException("a row answered a key that was not asked");
  }

  /**
   * Asks each batch's tablet, {@link #TABLETS_AT_ONCE} at a time, and answers when all have
   * answered (or failed).
   */
  private static void write(Function<String, RecipientRef<TabletActor.Command>> tablets, Write w, Duration timeout,
      ActorSystem<?> system) {
    List<Supplier<CompletionStage<TabletActor.BatchOutcome>>> tasks = new ArrayList<>(w.batches().size());
    for (Batch b : w.batches()) {
      tasks.add(() -> Stages.direct(AskPattern.<TabletActor.Command, TabletActor.BatchOutcome>askWithStatus(
          tablets.apply(b.tabletId()), r -> new TabletActor.MutateBatch(b.mutations(), r), timeout,
          system.scheduler())));
    }
    List<CompletableFuture<TabletActor.BatchOutcome>> asks = Stages.atMost(TABLETS_AT_ONCE, tasks, system);
    CompletableFuture.allOf(asks.toArray(CompletableFuture[]::new)).whenComplete((x, ignored) -> {
      List<TabletActor.BatchOutcome> outcomes = new ArrayList<>(asks.size());
      List<Refusal> refusals = new ArrayList<>(asks.size());
      for (CompletableFuture<TabletActor.BatchOutcome> a : asks) {
        try {
          outcomes.add(a.join());
          refusals.add(null);
        } catch (CompletionException | CancellationException e) {
          outcomes.add(null);
          refusals.add(Refusals.of(e));
        }
      }
      w.replyTo().tell(new WriteAnswer(outcomes, refusals));
    });
  }
}
