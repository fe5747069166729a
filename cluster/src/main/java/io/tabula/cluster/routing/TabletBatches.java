package io.tabula.cluster.routing;

import io.tabula.actors.Stages;
import io.tabula.actors.master.TabletInfo;
import io.tabula.actors.tablet.NodeRequests;
import io.tabula.actors.tablet.TabletActor;
import io.tabula.persistence.model.RowMutation;
import io.tabula.protocol.errors.ErrorCode;
import io.tabula.protocol.errors.Refusal;
import io.tabula.streams.filter.FilteredRow;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Supplier;
import org.apache.pekko.Done;
import org.apache.pekko.NotUsed;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.stream.javadsl.Source;

/**
 * Many rows in one message per tablet, and one message per node: the entries of a MutateRows
 * request, and the keys of a ReadRows request that names only keys, are grouped by the tablet
 * holding them ({@link TabletLocations}: cached, or looked up a thousand tablets at a time).
 * Groups of tablets served here go to the tablet (its
 * reads, or its actor for a {@link TabletActor.MutateBatch}); the groups of each other node
 * go to that node in one {@link NodeRequests.Read} or {@link NodeRequests.Write} (a few when
 * a write exceeds the frame), whatever the number of its tablets they touch, instead of one
 * ask per row or per tablet; while that node is busy, the reads or writes for it of several
 * requests go together ({@link PeerMessages}). Mutations a tablet refuses as moved (a split,
 * a merge or a move the node had not heard of) go again in groups, that tablet forgotten; a read
 * group refused so goes again through the tablet's sharded actor, and its keys one by one
 * through {@link Router}'s rerouting path if that too is refused.
 */
public final class TabletBatches {
  /** Keys of one ReadRows sent to a tablet in one message at most. */
  private static final int READ_GROUP = 256;

  /** Most keys a read gathers whole ({@link #readAll}); longer key lists are streamed. */
  public static final int GATHERED_KEYS = READ_GROUP;

  private final Router router;
  /** Reads and writes for other nodes, sent together while a node is busy. */
  private final PeerMessages<NodeRequests.Part, NodeRequests.ReadAnswer> peerReads;
  private final PeerMessages<NodeRequests.Batch, NodeRequests.WriteAnswer> peerWrites;

  /** Most bytes of keys in one message of reads sent together. */
  static final long READ_KEY_BYTES = 256 * 1024;

  public TabletBatches(Router router) {
    this.router = router;
    this.peerReads = new PeerMessages<>((peer, parts, filter) -> router.readOnNode(peer, parts, (byte[]) filter),
        TabletBatches::readSlice, READ_KEY_BYTES);
    this.peerWrites = new PeerMessages<>((peer, batches, none) -> router.writeOnNode(peer, batches),
        TabletBatches::writeSlice, MESSAGE_BYTES);
  }

  /**
   * Most bytes of row mutations one message to a tablet carries. A tablet may be served by
   * another node, and a message between nodes must fit the cluster transport's frame
   * ({@code pekko.remote.artery.advanced.maximum-frame-size}, set to 1 MiB in
   * tabula-node.conf): a larger one is dropped by the transport and its ask only times out.
   */
  static final long MESSAGE_BYTES = 512 * 1024;

  /**
   * One MutateRows request: its table, its entries (null where invalid), each entry's failure
   * as it becomes known (null while none or once applied), and when it started (moved
   * answers are retried for a while).
   */
  private record Request(String table, RowMutation[] parsed, Throwable[] out, long startNanos) {}

  /** Some rows of one tablet, by index into the request's entries. */
  private record Slice(String tabletId, List<Integer> rows) {}

  /** The slices one message carries, and about how many bytes of mutations they are. */
  private record Message(List<Slice> slices, long bytes) {}

  /**
   * The rows of {@code byTablet} packed into messages of at most {@link #MESSAGE_BYTES} of
   * mutations each, tablet after tablet (a row larger than that goes alone): MutateRows
   * entries are independent, so a tablet's share of a batch may arrive in several messages,
   * and one message may carry the shares of several tablets.
   */
  private static List<Message> packed(Map<String, List<Integer>> byTablet, RowMutation[] parsed) {
    List<Message> messages = new ArrayList<>();
    List<Slice> current = new ArrayList<>();
    long bytes = 0;
    for (Map.Entry<String, List<Integer>> e : byTablet.entrySet()) {
      Slice slice = null;
      for (int i : e.getValue()) {
        long size = bytesOf(parsed[i]);
        if (bytes > 0 && bytes + size > MESSAGE_BYTES) {
          messages.add(new Message(current, bytes));
          current = new ArrayList<>();
          bytes = 0;
          slice = null;
        }
        if (slice == null) {
          slice = new Slice(e.getKey(), new ArrayList<>());
          current.add(slice);
        }
        slice.rows().add(i);
        bytes += size;
      }
    }
    if (!current.isEmpty()) {
      messages.add(new Message(current, bytes));
    }
    return messages;
  }

  /** About how many bytes a row mutation takes in a message. */
  private static long bytesOf(RowMutation rm) {
    long n = rm.row().length + 16;
    for (io.tabula.persistence.model.Mutation m : rm.mutations()) {
      n += 32;
      if (m instanceof io.tabula.persistence.model.Mutation.SetCell c) {
        n += c.qualifier().length + c.value().length + c.family().length();
      } else if (m instanceof io.tabula.persistence.model.Mutation.DeleteFromColumn d) {
        n += d.qualifier().length + d.family().length();
      }
    }
    return n;
  }

  /**
   * Applies each of {@code rows} (a MutateRows request's entries; a null entry, one the
   * request got wrong, is skipped) and completes, never exceptionally, with each entry's
   * outcome in order: null when applied, else why not.
   */
  public CompletionStage<Throwable[]> mutate(String table, RowMutation[] rows) {
    Throwable[] out = new Throwable[rows.length];
    List<Integer> valid = new ArrayList<>(rows.length);
    for (int i = 0; i < rows.length; i++) {
      if (rows[i] != null) {
        valid.add(i);
      }
    }
    return send(new Request(table, rows, out, System.nanoTime()), valid, 0, false).thenApply(x -> out);
  }

  /**
   * Sends the entries {@code rows} grouped by tablet, those whose tablet is not cached once it is
   * looked up (unless {@code covered}: they were, and an entry whose tablet still is not goes
   * alone, the per-row way, {@link NodeRequests#TABLETS_AT_ONCE} at a time), each tablet's node
   * as its cached location has it ({@link Router#peerOf}): the groups of
   * tablets served here, or whose owner is not known as a peer, go to each tablet's actor;
   * the groups of each other node go to it together ({@link NodeRequests.Write}), packed into
   * as few messages as the frame allows. Entries a tablet refuses as moved (a split or a merge
   * the cache had not caught up with) go again as groups, looked up again,
   * after a short pause, while the request may still retry; one ask per row instead turned a
   * split into a flood of asks.
   */
  private CompletableFuture<Void> send(Request q, List<Integer> rows, int attempt, boolean covered) {
    String table = q.table();
    RowMutation[] parsed = q.parsed();
    Map<String, List<Integer>> byTablet = new LinkedHashMap<>();
    Map<String, TabletInfo> located = new java.util.HashMap<>();
    List<CompletableFuture<?>> work = new ArrayList<>();
    List<Supplier<CompletionStage<Void>>> alone = new ArrayList<>();
    List<Integer> missing = new ArrayList<>();
    List<byte[]> missingRows = new ArrayList<>();
    for (int i : rows) {
      TabletInfo t = router.locations().cached(table, parsed[i].row());
      if ((t == null || router.locations().ownerOf(t) == null) && !covered) { // an owner not known is looked up
        missing.add(i);
        missingRows.add(parsed[i].row());
      } else if (t == null) {
        alone.add(() -> alone(table, i, parsed[i], q.out()));
      } else {
        byTablet.computeIfAbsent(t.id(), k -> new ArrayList<>()).add(i);
        located.putIfAbsent(t.id(), t);
      }
    }
    work.addAll(Stages.atMost(NodeRequests.TABLETS_AT_ONCE, alone, router.system()));
    if (!missing.isEmpty()) {
      work.add(router.locations().cover(table, missingRows).thenCompose(x -> send(q, missing, attempt, true))
          .toCompletableFuture());
    }
    Map<ActorRef<NodeRequests.Command>, Map<String, List<Integer>>> byNode = new LinkedHashMap<>();
    List<Slice> here = new ArrayList<>();
    byTablet.forEach((tabletId, rowsOfTablet) -> {
      ActorRef<NodeRequests.Command> peer = router.localReads(tabletId) != null ? null
          : router.peerOf(located.get(tabletId));
      if (peer != null) {
        byNode.computeIfAbsent(peer, k -> new LinkedHashMap<>()).put(tabletId, rowsOfTablet);
        return;
      }
      for (Message message : packed(Map.of(tabletId, rowsOfTablet), parsed)) {
        here.add(message.slices().get(0));
      }
    });
    List<Supplier<CompletionStage<TabletActor.BatchOutcome>>> asks = new ArrayList<>(here.size());
    here.forEach(s -> asks.add(() -> router.askTablet(s.tabletId(),
        r -> new TabletActor.MutateBatch(batch(s, parsed), r))));
    List<CompletableFuture<TabletActor.BatchOutcome>> sent = Stages.atMost(NodeRequests.TABLETS_AT_ONCE, asks, router.system());
    for (int k = 0; k < here.size(); k++) {
      work.add(settled(q, located.get(here.get(k).tabletId()), here.get(k).rows(), sent.get(k), attempt));
    }
    byNode.forEach((peer, tablets) -> packed(tablets, parsed).forEach(message -> {
      List<Slice> slices = message.slices();
      List<NodeRequests.Batch> batches = new ArrayList<>(slices.size());
      slices.forEach(s -> batches.add(new NodeRequests.Batch(s.tabletId(), batch(s, parsed))));
      CompletionStage<NodeRequests.WriteAnswer> answer = peerWrites.send(peer, batches, null, message.bytes());
      for (int k = 0; k < slices.size(); k++) {
        int part = k;
        work.add(settled(q, located.get(slices.get(k).tabletId()), slices.get(k).rows(),
            answer.thenCompose(a -> a.refusals().get(part) == null
                ? CompletableFuture.completedFuture(a.outcomes().get(part))
                : CompletableFuture.failedFuture(a.refusals().get(part).exception())), attempt));
      }
    }));
    return CompletableFuture.allOf(work.toArray(CompletableFuture[]::new));
  }

  /**
   * The answer to parts {@code [start, end)} of a read sent with others: whole where the
   * answer covered them; cut where it stopped, saying where, as an answer to those parts
   * alone would; no part read where it stopped before them.
   */
  static NodeRequests.ReadAnswer readSlice(NodeRequests.ReadAnswer a, int start, int end) {
    int complete;
    int nextKey = 0;
    if (a.complete() >= end) {
      complete = end - start;
    } else if (a.complete() < start) {
      complete = 0;
    } else {
      complete = a.complete() - start;
      nextKey = a.nextKey();
    }
    return new NodeRequests.ReadAnswer(new ArrayList<>(a.rows().subList(start, end)),
        new ArrayList<>(a.refusals().subList(start, end)), complete, nextKey);
  }

  /** The answer to batches {@code [start, end)} of a write sent with others. */
  static NodeRequests.WriteAnswer writeSlice(NodeRequests.WriteAnswer a, int start, int end) {
    return new NodeRequests.WriteAnswer(new ArrayList<>(a.outcomes().subList(start, end)),
        new ArrayList<>(a.refusals().subList(start, end)));
  }

  private static List<RowMutation> batch(Slice s, RowMutation[] parsed) {
    List<RowMutation> batch = new ArrayList<>(s.rows().size());
    s.rows().forEach(i -> batch.add(parsed[i]));
    return batch;
  }

  /**
   * Records the outcome of the entries {@code group} (sent as one batch to {@code tablet}) in
   * {@code out}: applied, refused, or, for those refused as moved while the request may still
   * retry, sent again after a pause, the tablet's cached location forgotten (its rows are
   * looked up again, owners with them).
   */
  private CompletableFuture<Void> settled(Request q, TabletInfo tablet, List<Integer> group,
      CompletionStage<TabletActor.BatchOutcome> sent, int attempt) {
    Throwable[] out = q.out();
    return sent.handle((outcome, err) -> {
      List<Integer> moved = new ArrayList<>();
      for (int k = 0; k < group.size(); k++) {
        int i = group.get(k);
        Throwable refused = err != null ? err : refusal(outcome.refusals().get(k));
        if (refused == null) {
          out[i] = null;
        } else if (Refusal.is(refused, ErrorCode.MOVED) && router.mayRetryMoved(q.startNanos())) {
          moved.add(i);
        } else {
          out[i] = refused;
        }
      }
      if (moved.isEmpty()) {
        return CompletableFuture.<Void>completedFuture(null);
      }
      router.locations().forget(tablet);
      return Router.pause(attempt).thenCompose(x -> send(q, moved, attempt + 1, false)).toCompletableFuture();
    }).thenCompose(x -> x).toCompletableFuture();
  }

  /** One entry through the per-row path, which reroutes on moved; its outcome lands in {@code out[i]}. */
  private CompletableFuture<Void> alone(String table, int i, RowMutation rm, Throwable[] out) {
    return router.<Done>ask(table, rm.row(), (t, r) -> new TabletActor.Mutate(rm, r))
        .handle((ok, err) -> {
          out[i] = err;
          return (Void) null;
        }).toCompletableFuture();
  }

  /**
   * The rows of {@code keys} (in the order given) that have cells passing {@code filter},
   * a group's rows per list (no empty lists): consecutive keys of one tablet go in one
   * message, a few messages at a time.
   */
  public Source<List<FilteredRow>, NotUsed> read(String table, List<byte[]> keys, byte[] filter) {
    // (a stage completing with null would end the source without an element)
    return Source.completionStage(router.locations().cover(table, keys).thenApply(x -> groups(table, keys)))
        .mapConcat(groups -> groups).mapAsync(4, g -> readGroup(table, g, filter))
        .filter(rows -> !rows.isEmpty());
  }

  /**
   * The same rows gathered into one list, every group read at once: for requests of at most
   * {@link #GATHERED_KEYS} keys, where a stream per request would cost more than the reads.
   * Groups of tablets served here are read here; the groups of each other node go to it in
   * one message ({@link NodeRequests}), whatever the number of its tablets they touch.
   */
  public CompletionStage<List<FilteredRow>> readAll(String table, List<byte[]> keys, byte[] filter) {
    return router.locations().cover(table, keys).thenCompose(x -> readAllCovered(table, keys, filter));
  }

  private CompletionStage<List<FilteredRow>> readAllCovered(String table, List<byte[]> keys, byte[] filter) {
    List<List<byte[]>> groups = groups(table, keys);
    List<CompletableFuture<List<FilteredRow>>> reads = new ArrayList<>(groups.size());
    Map<ActorRef<NodeRequests.Command>, List<Integer>> byNode = new LinkedHashMap<>();
    TabletInfo[] tablets = new TabletInfo[groups.size()];
    for (int i = 0; i < groups.size(); i++) {
      TabletInfo t = router.locations().cached(table, groups.get(i).get(0));
      ActorRef<NodeRequests.Command> peer = t == null || router.localReads(t.id()) != null ? null
          : router.peerOf(t);
      if (peer == null) {
        reads.add(readGroup(table, groups.get(i), filter).toCompletableFuture());
      } else {
        tablets[i] = t;
        reads.add(null);
        byNode.computeIfAbsent(peer, k -> new ArrayList<>()).add(i);
      }
    }
    byNode.forEach((peer, indexes) -> {
      List<NodeRequests.Part> parts = new ArrayList<>(indexes.size());
      indexes.forEach(i -> parts.add(new NodeRequests.Part(tablets[i].id(), groups.get(i))));
      CompletionStage<NodeRequests.ReadAnswer> answer = readOnNode(peer, parts, filter);
      for (int k = 0; k < indexes.size(); k++) {
        List<byte[]> group = groups.get(indexes.get(k));
        TabletInfo t = tablets[indexes.get(k)];
        String asked = router.locations().ownerOf(t);
        reads.set(indexes.get(k), part(answer, k, () -> {
          router.locations().forgetOwner(t, asked); // it does not serve it (any more): the next lookup says who does
          return readGroup(table, group, filter);
        }).toCompletableFuture());
      }
    });
    if (reads.size() == 1) {
      return reads.get(0);
    }
    return CompletableFuture.allOf(reads.toArray(CompletableFuture[]::new)).thenApply(x -> {
      List<FilteredRow> out = new ArrayList<>(keys.size());
      reads.forEach(r -> out.addAll(r.join()));
      return out;
    });
  }

  /**
   * Every part of {@code parts} read by node {@code peer}, in one answer: an answer bounded
   * in size leaves parts (or the end of one) unread, and those are asked for again.
   */
  private CompletionStage<NodeRequests.ReadAnswer> readOnNode(ActorRef<NodeRequests.Command> peer,
      List<NodeRequests.Part> parts, byte[] filter) {
    long keyBytes = 0;
    for (NodeRequests.Part p : parts) {
      for (byte[] k : p.keys()) {
        keyBytes += k.length + 8;
      }
    }
    return peerReads.send(peer, parts, filter, keyBytes).thenCompose(a -> {
      int done = a.complete();
      if (done >= parts.size()) {
        return CompletableFuture.completedFuture(a);
      }
      NodeRequests.Part cut = parts.get(done);
      List<NodeRequests.Part> rest = new ArrayList<>(parts.size() - done);
      rest.add(new NodeRequests.Part(cut.tabletId(), new ArrayList<>(cut.keys().subList(a.nextKey(),
          cut.keys().size()))));
      rest.addAll(parts.subList(done + 1, parts.size()));
      return readOnNode(peer, rest, filter).thenApply(more -> {
        List<List<FilteredRow>> rows = new ArrayList<>(a.rows().subList(0, done));
        List<Refusal> refusals = new ArrayList<>(a.refusals().subList(0, done));
        List<FilteredRow> joined = new ArrayList<>(a.rows().get(done));
        joined.addAll(more.rows().get(0));
        rows.add(joined);
        refusals.add(more.refusals().get(0));
        rows.addAll(more.rows().subList(1, more.rows().size()));
        refusals.addAll(more.refusals().subList(1, more.refusals().size()));
        return new NodeRequests.ReadAnswer(rows, refusals, parts.size(), 0);
      });
    });
  }

  /**
   * Part {@code k} of another node's answer: its rows; {@code moved} when that node refused
   * the part as moved (its tablet is no longer, or not yet, served there); else its refusal.
   */
  private static CompletionStage<List<FilteredRow>> part(CompletionStage<NodeRequests.ReadAnswer> answer, int k,
      Supplier<CompletionStage<List<FilteredRow>>> moved) {
    return answer.thenCompose(a -> {
      Refusal r = a.refusals().get(k);
      if (r == null) {
        return CompletableFuture.completedFuture(a.rows().get(k));
      }
      return r.code() == ErrorCode.MOVED ? moved.get() : CompletableFuture.failedFuture(r.exception());
    });
  }

  /** {@code keys} in the order given, cut where the tablet changes or a group is full. */
  private List<List<byte[]>> groups(String table, List<byte[]> keys) {
    List<List<byte[]>> groups = new ArrayList<>();
    String current = null;
    for (byte[] k : keys) {
      TabletInfo t = router.locations().cached(table, k);
      String id = t == null ? null : t.id();
      if (groups.isEmpty() || id == null || !id.equals(current) || groups.get(groups.size() - 1).size() >= READ_GROUP) {
        groups.add(new ArrayList<>());
      }
      groups.get(groups.size() - 1).add(k);
      current = id;
    }
    return groups;
  }

  private CompletionStage<List<FilteredRow>> readGroup(String table, List<byte[]> keys, byte[] filter) {
    TabletInfo t = router.locations().cached(table, keys.get(0));
    CompletionStage<List<FilteredRow>> local = t == null ? null : router.readLocal(t.id(), r -> r.rows(keys, filter));
    CompletionStage<List<FilteredRow>> batch = local != null ? local : t == null ? CompletableFuture.failedFuture(
        Refusal.of(ErrorCode.MOVED, "no tablet of table " + table + " is known to hold the row").exception())
        : router.<TabletActor.RowsResult>askTablet(t.id(), r -> new TabletActor.ReadRows(keys, filter, r))
            .thenApply(TabletActor.RowsResult::rows);
    return batch.handle((rows, err) -> {
      if (err == null) {
        return CompletableFuture.completedFuture(rows);
      }
      if (!Refusal.is(err, ErrorCode.MOVED)) {
        return CompletableFuture.<List<FilteredRow>>failedFuture(err);
      }
      if (t != null) {
        router.locations().forget(t);
      }
      // A split moved some of the keys: read them one by one through the rerouting path.
      return Source.from(keys).mapAsync(4, k -> readOne(table, k, filter)).mapConcat(found -> found)
          .runWith(org.apache.pekko.stream.javadsl.Sink.seq(), router.system());
    }).thenCompose(x -> x);
  }

  /** One row through the rerouting path: a list of it, or an empty list when no cell passes. */
  public CompletionStage<List<FilteredRow>> readOne(String table, byte[] key, byte[] filter) {
    TabletInfo t = router.locations().cached(table, key);
    CompletionStage<FilteredRow> local = t == null ? null : router.readLocal(t.id(), r -> r.row(key, filter));
    if (local == null) {
      ActorRef<NodeRequests.Command> peer = t == null ? null : router.peerOf(t);
      String asked = t == null ? null : router.locations().ownerOf(t);
      return peer == null ? routedReadOne(table, key, filter) : part(readOnNode(peer,
          List.of(new NodeRequests.Part(t.id(), List.of(key))), filter), 0, () -> {
            router.locations().forgetOwner(t, asked); // it does not serve it (any more): the next lookup says who does
            return routedReadOne(table, key, filter);
          });
    }
    return local.handle((row, err) -> {
      if (err == null) {
        return CompletableFuture.completedFuture(row == null ? List.<FilteredRow>of() : List.of(row));
      }
      if (Refusal.is(err, ErrorCode.MOVED)) {
        return routedReadOne(table, key, filter);
      }
      return CompletableFuture.<List<FilteredRow>>failedFuture(err);
    }).thenCompose(x -> x);
  }

  private CompletionStage<List<FilteredRow>> routedReadOne(String table, byte[] key, byte[] filter) {
    return router.<TabletActor.RowResult>ask(table, key, (t, r) -> new TabletActor.ReadRow(key, filter, r))
        .thenApply(a -> a.value().row() == null ? List.of() : List.of(a.value().row()));
  }

  private static Throwable refusal(Refusal r) {
    return r == null ? null : r.exception();
  }
}
