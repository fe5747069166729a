package io.tabula.cluster.routing;

import com.google.errorprone.annotations.concurrent.GuardedBy;
import io.tabula.actors.tablet.NodeRequests;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.pekko.actor.typed.ActorRef;

/**
 * Messages to other nodes, sent together while a node is busy. A message between nodes costs
 * far more CPU than the few rows of one request (about a quarter of a millisecond for a round
 * trip on two cores, most of it threads handing work over and waking each other), so while
 * {@value #IN_FLIGHT} messages are on their way to a node, the requests for it that follow
 * wait, and go together in one message when an answer comes back: each is then answered its
 * own part of the one answer. A node that is not busy gets each request at once, so
 * coalescing costs latency only under load, and then at most one round trip.
 *
 * <p>A request is a list of items (the tablets' parts of a read, the tablets' batches of a
 * write); requests go together by concatenating their items, only with an equal
 * {@code together} key (a read's filter) and up to {@code maxBytes}; {@link Slicer} cuts each
 * request's answer out of the whole. A node that does not answer in time fails the requests
 * waiting for it too.
 *
 * <p>Thread-safe: each node's state is guarded by its {@link Peer}'s monitor, held for queue
 * changes only; messages are sent, and answers handed out, outside it.
 *
 * @param <I> an item of a request
 * @param <A> the answer to a message: one per item, in order
 */
final class PeerMessages<I, A> {
  /** Messages in flight to one node before further requests for it wait to go together. */
  static final int IN_FLIGHT = 2;

  /** Sends one message of {@code items} to {@code peer} and gives its answer. */
  interface Sender<I, A> {
    CompletionStage<A> send(ActorRef<NodeRequests.Command> peer, List<I> items, Object together);
  }

  /** The answer to items {@code [start, end)} of a message, cut out of its answer {@code whole}. */
  interface Slicer<A> {
    A slice(A whole, int start, int end);
  }

  private final Sender<I, A> sender;
  private final Slicer<A> slicer;
  private final long maxBytes;
  private final Map<ActorRef<NodeRequests.Command>, Peer> peers = new ConcurrentHashMap<>();

  /** @param maxBytes most bytes (as each request counts its own) of requests sent together */
  PeerMessages(Sender<I, A> sender, Slicer<A> slicer, long maxBytes) {
    this.sender = sender;
    this.slicer = slicer;
    this.maxBytes = maxBytes;
  }

  /**
   * Node {@code peer}'s answer to {@code items}, sent alone or with other requests of an
   * equal {@code together} key; {@code bytes} is the request's size, as {@code maxBytes}
   * counts. Fails as the sender's answer does.
   */
  CompletionStage<A> send(ActorRef<NodeRequests.Command> peer, List<I> items, Object together, long bytes) {
    Pending<I, A> p = new Pending<>(items, together, bytes, new CompletableFuture<>());
    Peer node = peers.computeIfAbsent(peer, Peer::new);
    if (node.sendNowOrWait(p)) {
      node.send(List.of(p));
    }
    return p.answer;
  }

  /** One request waiting for, or in, a message. */
  private record Pending<I, A>(List<I> items, Object together, long bytes, CompletableFuture<A> answer) {}

  /** The requests for one node. */
  private final class Peer {
    private final ActorRef<NodeRequests.Command> ref;
    @GuardedBy("this")
    private int inFlight;
    @GuardedBy("this")
    private final ArrayDeque<Pending<I, A>> waiting = new ArrayDeque<>();

    Peer(ActorRef<NodeRequests.Command> ref) {
      this.ref = ref;
    }

    /** True if {@code p} is to be sent now (it counts as in flight); false if it waits. */
    synchronized boolean sendNowOrWait(Pending<I, A> p) {
      if (inFlight < IN_FLIGHT) {
        inFlight++;
        return true;
      }
      waiting.add(p);
      return false;
    }

    /** Sends {@code group} as one message; sends what waited meanwhile, then hands out the answer. */
    void send(List<Pending<I, A>> group) {
      List<I> all = new ArrayList<>();
      group.forEach(p -> all.addAll(p.items()));
      CompletionStage<A> sent;
      try {
        sent = sender.send(ref, all, group.get(0).together());
      } catch (RuntimeException e) {
        // Counted as an answer that failed, so the slot is given back and nothing waits for ever.
        sent = CompletableFuture.failedFuture(e);
      }
      sent.whenComplete((answer, err) -> {
        List<Pending<I, A>> next;
        List<Pending<I, A>> failed = List.of();
        synchronized (this) {
          if (err != null) {
            // The node did not answer in time: what waits for it would fare no better.
            failed = new ArrayList<>(waiting);
            waiting.clear();
          }
          next = nextGroup();
          if (next == null && --inFlight == 0 && waiting.isEmpty()) {
            peers.remove(ref, this);
          }
        }
        if (next != null) {
          send(next);
        }
        if (err != null) {
          group.forEach(p -> p.answer().completeExceptionally(err));
          failed.forEach(p -> p.answer().completeExceptionally(err));
          return;
        }
        int start = 0;
        for (Pending<I, A> p : group) {
          int end = start + p.items().size();
          try {
            p.answer().complete(group.size() == 1 ? answer : slicer.slice(answer, start, end));
          } catch (RuntimeException e) {
            p.answer().completeExceptionally(e);
          }
          start = end;
        }
      });
    }

    /**
     * The requests to send next, taken from the waiting ones: the oldest, and those after it
     * with an equal key while they fit {@code maxBytes}; null if none waits.
     */
    @GuardedBy("this")
    private List<Pending<I, A>> nextGroup() {
      Pending<I, A> first = waiting.poll();
      if (first == null) {
        return null;
      }
      List<Pending<I, A>> group = new ArrayList<>();
      group.add(first);
      long bytes = first.bytes();
      for (Iterator<Pending<I, A>> it = waiting.iterator(); it.hasNext(); ) {
        Pending<I, A> p = it.next();
        if (!Objects.deepEquals(p.together(), first.together())) {
          continue;
        }
        if (bytes + p.bytes() > maxBytes) {
          break;
        }
        bytes += p.bytes();
        group.add(p);
        it.remove();
      }
      return group;
    }
  }
}
