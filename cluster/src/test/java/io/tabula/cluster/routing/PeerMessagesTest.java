package io.tabula.cluster.routing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.tabula.actors.tablet.NodeRequests;
import io.tabula.actors.tablet.TabletActor;
import io.tabula.protocol.errors.Refusal;
import io.tabula.streams.filter.FilteredRow;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeoutException;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.typed.ActorRef;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * How reads and writes for a busy node go together and how each gets its own part of the one
 * answer.
 * The other node here is a stand-in that records each message and answers when the test says
 * (a real node answers as soon as it can, so when reads go together would be up to chance);
 * real nodes answering coalesced reads, with answers cut at the frame's size, are in the
 * multi-JVM ThreeNodesTest.
 */
class PeerMessagesTest {
  private static ActorTestKit kit;
  private static ActorRef<NodeRequests.Command> peer;
  private static ActorRef<NodeRequests.Command> otherPeer;

  /** One message the stand-in node received, answered by the test. */
  private record Sent(ActorRef<NodeRequests.Command> peer, List<NodeRequests.Part> parts, byte[] filter,
      CompletableFuture<NodeRequests.ReadAnswer> answer) {}

  private final List<Sent> sent = Collections.synchronizedList(new ArrayList<>());
  private final PeerMessages<NodeRequests.Part, NodeRequests.ReadAnswer> reads = new PeerMessages<>(
      (to, parts, filter) -> send(to, parts, (byte[]) filter), TabletBatches::readSlice, TabletBatches.READ_KEY_BYTES);

  @BeforeAll
  static void start() {
    kit = ActorTestKit.create();
    peer = kit.<NodeRequests.Command>createTestProbe().ref();
    otherPeer = kit.<NodeRequests.Command>createTestProbe().ref();
  }

  @AfterAll
  static void stop() {
    kit.shutdownTestKit();
  }

  private CompletionStage<NodeRequests.ReadAnswer> send(ActorRef<NodeRequests.Command> to,
      List<NodeRequests.Part> parts, byte[] filter) {
    CompletableFuture<NodeRequests.ReadAnswer> answer = new CompletableFuture<>();
    sent.add(new Sent(to, parts, filter, answer));
    return answer;
  }

  private static byte[] b(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  private static NodeRequests.Part part(String tablet, String... keys) {
    List<byte[]> k = new ArrayList<>();
    for (String key : keys) {
      k.add(b(key));
    }
    return new NodeRequests.Part(tablet, k);
  }

  private static FilteredRow row(String key) {
    return new FilteredRow(b(key), List.of());
  }

  /** A whole answer to {@code s}: one row per key. */
  private static NodeRequests.ReadAnswer whole(Sent s) {
    List<List<FilteredRow>> rows = new ArrayList<>();
    List<Refusal> refusals = new ArrayList<>();
    for (NodeRequests.Part p : s.parts()) {
      rows.add(p.keys().stream().map(k -> row(new String(k, StandardCharsets.UTF_8))).toList());
      refusals.add(null);
    }
    return new NodeRequests.ReadAnswer(rows, refusals, s.parts().size(), 0);
  }

  private static List<String> keys(List<FilteredRow> rows) {
    return rows.stream().map(r -> new String(r.key(), StandardCharsets.UTF_8)).toList();
  }

  private static <T> T done(CompletionStage<T> a) throws Exception {
    CompletableFuture<T> f = a.toCompletableFuture();
    assertTrue(f.isDone(), "answered");
    return f.get();
  }

  @Test
  void readsGoAtOnceUntilTheNodeIsBusyThenTogetherWhenAnAnswerComesBack() throws Exception {
    byte[] filter = b("filter");
    var first = reads.send(peer, List.of(part("t1", "a")), filter, 10);
    var second = reads.send(peer, List.of(part("t2", "b")), filter, 10);
    assertEquals(2, sent.size(), "two reads in flight at once");
    var third = reads.send(peer, List.of(part("t1", "c"), part("t3", "d", "e")), filter, 10);
    var fourth = reads.send(peer, List.of(part("t2", "f")), filter, 10);
    var elsewhere = reads.send(otherPeer, List.of(part("t9", "z")), filter, 10);
    assertEquals(3, sent.size(), "the third and fourth wait; another node's read goes");
    assertSame(otherPeer, sent.get(2).peer());

    sent.get(0).answer().complete(whole(sent.get(0)));
    assertEquals(List.of("a"), keys(done(first).rows().get(0)));
    assertEquals(4, sent.size(), "what waited goes as one message");
    Sent together = sent.get(3);
    assertEquals(List.of("t1", "t3", "t2"), together.parts().stream().map(NodeRequests.Part::tabletId).toList());
    assertFalse(third.toCompletableFuture().isDone());

    together.answer().complete(whole(together));
    NodeRequests.ReadAnswer a3 = done(third);
    assertEquals(2, a3.complete());
    assertEquals(List.of("c"), keys(a3.rows().get(0)));
    assertEquals(List.of("d", "e"), keys(a3.rows().get(1)));
    NodeRequests.ReadAnswer a4 = done(fourth);
    assertEquals(1, a4.complete());
    assertEquals(List.of("f"), keys(a4.rows().get(0)));
    assertFalse(second.toCompletableFuture().isDone(), "the second's own message is still out");
    sent.get(1).answer().complete(whole(sent.get(1)));
    assertEquals(List.of("b"), keys(done(second).rows().get(0)));
    sent.get(2).answer().complete(whole(sent.get(2)));
    assertEquals(List.of("z"), keys(done(elsewhere).rows().get(0)));
  }

  @Test
  void readsWithAnotherFilterWaitForAMessageOfTheirOwn() throws Exception {
    reads.send(peer, List.of(part("t1", "a")), b("x"), 10);
    reads.send(peer, List.of(part("t1", "b")), b("x"), 10);
    var y = reads.send(peer, List.of(part("t1", "c")), b("y"), 10);
    var x = reads.send(peer, List.of(part("t1", "d")), b("x"), 10);
    sent.get(0).answer().complete(whole(sent.get(0)));
    assertEquals(3, sent.size());
    assertEquals("y", new String(sent.get(2).filter(), StandardCharsets.UTF_8), "the oldest waiting goes first");
    assertEquals(1, sent.get(2).parts().size());
    sent.get(1).answer().complete(whole(sent.get(1)));
    assertEquals(4, sent.size());
    assertEquals("x", new String(sent.get(3).filter(), StandardCharsets.UTF_8));
    sent.get(2).answer().complete(whole(sent.get(2)));
    sent.get(3).answer().complete(whole(sent.get(3)));
    assertEquals(List.of("c"), keys(done(y).rows().get(0)));
    assertEquals(List.of("d"), keys(done(x).rows().get(0)));
  }

  @Test
  void anAnswerCutShortTellsEachReadWhereItStopped() throws Exception {
    byte[] filter = b("f");
    reads.send(peer, List.of(part("t0", "0")), filter, 10);
    reads.send(peer, List.of(part("t0", "1")), filter, 10);
    var a = reads.send(peer, List.of(part("t1", "a1", "a2"), part("t2", "a3", "a4", "a5")), filter, 10);
    var b = reads.send(peer, List.of(part("t3", "b1")), filter, 10);
    sent.get(0).answer().complete(whole(sent.get(0)));
    Sent together = sent.get(2);
    assertEquals(3, together.parts().size());
    // The node stopped in the second part (t2) before its key a5: part 1 of 3 is cut at key 2.
    together.answer().complete(new NodeRequests.ReadAnswer(
        List.of(List.of(row("a1"), row("a2")), List.of(row("a3"), row("a4")), List.of()),
        java.util.Arrays.asList(null, null, null), 1, 2));
    NodeRequests.ReadAnswer forA = done(a);
    assertEquals(1, forA.complete());
    assertEquals(2, forA.nextKey());
    assertEquals(List.of("a3", "a4"), keys(forA.rows().get(1)));
    NodeRequests.ReadAnswer forB = done(b);
    assertEquals(0, forB.complete(), "nothing of the read after the cut was read");
    assertEquals(0, forB.nextKey());
    assertEquals(List.of(), forB.rows().get(0));
    assertNull(forB.refusals().get(0));
  }

  @Test
  void aNodeThatDoesNotAnswerFailsWhatWaitsForItToo() {
    byte[] filter = b("f");
    var first = reads.send(peer, List.of(part("t0", "0")), filter, 10);
    reads.send(peer, List.of(part("t0", "1")), filter, 10);
    var waiting = reads.send(peer, List.of(part("t0", "2")), filter, 10);
    sent.get(0).answer().completeExceptionally(new TimeoutException("no answer in time"));
    for (var f : List.of(first, waiting)) {
      ExecutionException e = org.junit.jupiter.api.Assertions.assertThrows(ExecutionException.class,
          () -> f.toCompletableFuture().get());
      assertTrue(e.getCause() instanceof TimeoutException, e.toString());
    }
    assertEquals(2, sent.size(), "nothing more was sent to it");
  }

  @Test
  void requestsGoTogetherOnlyWhileTheyFitTheMessage() throws Exception {
    long half = TabletBatches.READ_KEY_BYTES / 2;
    reads.send(peer, List.of(part("t0", "0")), null, 10);
    reads.send(peer, List.of(part("t0", "1")), null, 10);
    reads.send(peer, List.of(part("t1", "a")), null, half);
    reads.send(peer, List.of(part("t2", "b")), null, half);
    reads.send(peer, List.of(part("t3", "c")), null, 1);
    sent.get(0).answer().complete(whole(sent.get(0)));
    assertEquals(List.of("t1", "t2"), sent.get(2).parts().stream().map(NodeRequests.Part::tabletId).toList(),
        "two halves fit; the third waits for the next message");
    sent.get(1).answer().complete(whole(sent.get(1)));
    assertEquals(List.of("t3"), sent.get(3).parts().stream().map(NodeRequests.Part::tabletId).toList());
  }

  @Test
  void writesSentTogetherGetEachTheirOwnBatchesOutcomes() throws Exception {
    List<List<NodeRequests.Batch>> messages = new ArrayList<>();
    List<CompletableFuture<NodeRequests.WriteAnswer>> answers = new ArrayList<>();
    PeerMessages<NodeRequests.Batch, NodeRequests.WriteAnswer> writes = new PeerMessages<>((to, batches, none) -> {
      CompletableFuture<NodeRequests.WriteAnswer> f = new CompletableFuture<>();
      messages.add(batches);
      answers.add(f);
      return f;
    }, TabletBatches::writeSlice, TabletBatches.MESSAGE_BYTES);
    NodeRequests.Batch b1 = new NodeRequests.Batch("t1", List.of());
    NodeRequests.Batch b2 = new NodeRequests.Batch("t2", List.of());
    NodeRequests.Batch b3 = new NodeRequests.Batch("t3", List.of());
    writes.send(peer, List.of(b1), null, 100);
    writes.send(peer, List.of(b1), null, 100);
    var two = writes.send(peer, List.of(b1, b2), null, 100);
    var one = writes.send(peer, List.of(b3), null, 100);
    answers.get(0).complete(new NodeRequests.WriteAnswer(List.of(new TabletActor.BatchOutcome(List.of())),
        java.util.Arrays.asList((Refusal) null)));
    assertEquals(List.of(b1, b2, b3), messages.get(2));
    Refusal moved = Refusal.of(io.tabula.protocol.errors.ErrorCode.MOVED, "t3 moved");
    TabletActor.BatchOutcome ok = new TabletActor.BatchOutcome(List.of());
    answers.get(2).complete(new NodeRequests.WriteAnswer(java.util.Arrays.asList(ok, ok, null),
        java.util.Arrays.asList(null, null, moved)));
    assertEquals(2, done(two).outcomes().size());
    assertNull(done(two).refusals().get(1));
    assertEquals(1, done(one).refusals().size());
    assertSame(moved, done(one).refusals().get(0));
  }

  @Test
  void aSendThatThrowsFailsItsRequestAndGivesItsPlaceBack() throws Exception {
    int[] calls = {0};
    PeerMessages<NodeRequests.Part, NodeRequests.ReadAnswer> failing = new PeerMessages<>((to, parts, filter) -> {
      if (calls[0]++ < 2) {
        throw new IllegalStateException("transport gone");
      }
      return send(to, parts, (byte[]) filter);
    }, TabletBatches::readSlice, TabletBatches.READ_KEY_BYTES);
    for (int i = 0; i < 2; i++) {
      var f = failing.send(peer, List.of(part("t0", "x")), null, 10).toCompletableFuture();
      assertTrue(f.isCompletedExceptionally(), "the request fails at once");
    }
    var third = failing.send(peer, List.of(part("t0", "y")), null, 10);
    assertEquals(1, sent.size(), "the failed sends gave their places back: the third goes at once");
    sent.get(0).answer().complete(whole(sent.get(0)));
    assertEquals(List.of("y"), keys(done(third).rows().get(0)));
  }
}
