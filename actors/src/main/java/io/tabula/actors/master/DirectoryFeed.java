package io.tabula.actors.master;

import com.esotericsoftware.kryo.DefaultSerializer;
import com.esotericsoftware.kryo.Kryo;
import com.esotericsoftware.kryo.Serializer;
import com.esotericsoftware.kryo.io.Input;
import com.esotericsoftware.kryo.io.Output;
import io.tabula.protocol.kryo.KryoSerializable;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.pekko.serialization.Serialization;
import org.apache.pekko.serialization.Serializers;

/**
 * How the master's directory reaches the nodes: as the events that change it, never whole
 * unless a node is too far behind (docs/cluster.md, "How the directory travels").
 *
 * <p>After each change it journals, the master publishes a {@link Change}: the events from
 * the version before to the version after, which every node applies to its copy with the
 * same pure function the master uses ({@link DirectoryEvents#apply}). A change whose events
 * do not fit {@link #INLINE_BYTES} is published without them. A node whose copy is not at a
 * change's {@code from} (it missed one, it just started, the master changed) asks
 * {@link Master.GetChanges} with its version, and gets the events since (inline, or as a blob
 * fetched in {@link #CHUNK_BYTES} chunks) when the master still keeps them, else the whole
 * directory as a blob. Each message stays far under Artery's frame, whatever the directory's
 * size; a change costs the master and each node work in proportion to the change.
 *
 * <p>Owned by the master's actor: every method runs on its thread.
 */
public final class DirectoryFeed {
  /** A change's or an answer's events up to this many bytes travel in the message itself. */
  static final int INLINE_BYTES = 256 * 1024;
  /** A blob travels in chunks of this many bytes. */
  static final int CHUNK_BYTES = 256 * 1024;
  /** The events kept for nodes that catch up: at most this many tablets touched in all... */
  static final int KEEP_WEIGHT = 200_000;
  /** ...and at most this many events. */
  static final int KEEP_EVENTS = 65_536;
  /**
   * Blobs kept for nodes fetching them: at most this many, of at most {@link #KEEP_BLOB_BYTES} in
   * all, none older than {@link #BLOB_NANOS}. Each node catching up by its share has a blob of
   * its own, so as many as there are nodes may be fetched at once (a new master).
   */
  static final int KEEP_BLOBS = 4_096;
  static final long KEEP_BLOB_BYTES = 256L << 20;
  static final long BLOB_NANOS = 60_000_000_000L;
  /** With nothing changed, a change of no events is published this often: a node behind notices. */
  static final long HEARTBEAT_NANOS = 2_000_000_000L;

  /**
   * Published on the directory topic: the events that take a directory from version
   * {@code from} to {@code to}, or null when they are too large to publish (a node asks for
   * them). {@code from == to} with no events is a heartbeat. {@code after} is the directory
   * they make, given to a subscriber in the master's own JVM only (never serialized), so the
   * master's node shares the master's copy instead of building its own (a cache of a share
   * finds it through {@link PublishedHere} too, where a check of local messages' serialization
   * dropped it). {@code digest} is the
   * {@link Directory#digest} of the directory at {@code to} (0: not known): a node checks its
   * copy against it.
   */
  @DefaultSerializer(Change.KryoBytes.class)
  public static final class Change implements KryoSerializable {
    private final long from;
    private final long to;
    private final List<Master.Event> events;
    private final Directory after;
    private final long digest;
    private final Shares shares;

    Change(long from, long to, List<Master.Event> events, Directory after, Shares shares) {
      this(from, to, events, after, after == null ? 0 : after.digest(), shares);
    }

    private Change(long from, long to, List<Master.Event> events, Directory after, long digest, Shares shares) {
      this.from = from;
      this.to = to;
      this.events = events;
      this.after = after;
      this.digest = digest;
      this.shares = shares;
    }

    /** What the nodes holding a share need beside the events; null with the events (too large to publish). */
    public Shares shares() {
      return shares;
    }

    /** The digest of the directory at {@code to}; 0 if not known. */
    public long digest() {
      return digest;
    }

    public long from() {
      return from;
    }

    public long to() {
      return to;
    }

    /** The events, or null: too large to publish. */
    public List<Master.Event> events() {
      return events;
    }

    /** The directory at {@code to} in the master's JVM; null once the change has crossed the network. */
    Directory after() {
      return after;
    }

    @Override
    public String toString() {
      return "Change(" + from + " -> " + to + ", " + (events == null ? "events to fetch" : events.size() + " events")
          + ")";
    }

    /** Kryo's serializer: from, to, the digest, then the events (-1 for none), without {@code after}. Stateless. */
    public static final class KryoBytes extends Serializer<Change> {
      public KryoBytes() {
        setImmutable(true);
      }

      @Override
      public void write(Kryo kryo, Output output, Change c) {
        output.writeLong(c.from);
        output.writeLong(c.to);
        output.writeLong(c.digest);
        writeEvents(kryo, output, c.events);
        kryo.writeObjectOrNull(output, c.shares, Shares.class);
      }

      @Override
      public Change read(Kryo kryo, Input input, Class<? extends Change> type) {
        long from = input.readLong();
        long to = input.readLong();
        long digest = input.readLong();
        List<Master.Event> events = readEvents(kryo, input);
        return new Change(from, to, events, null, digest, kryo.readObjectOrNull(input, Shares.class));
      }
    }
  }

  /**
   * A tablet as it was just before event {@code at} (of the events it travels with) placed it on
   * node {@code node}, which may not hold it yet: a node holding only its share inserts it before
   * it applies that event ({@link #entering}). {@code placement} {@link TabletPlacement#UNASSIGNED}: none.
   */
  public record Entering(int at, String node, TabletInfo tablet, TabletPlacement placement)
      implements KryoSerializable {}

  /**
   * What nodes holding a share need with a change's events: the tablets entering shares; the
   * digest of the tables' part of every share ({@link Directory#tablesDigest}); and the sums of
   * the shares' tablets ({@link Directory#shareSum}), of every node that has any when {@code
   * complete} (a heartbeat), else of those that changed (0: none left).
   */
  public record Shares(List<Entering> entering, long tablesDigest, Map<String, Long> sums, boolean complete)
      implements KryoSerializable {
    public Shares {
      entering = List.copyOf(entering);
      sums = new java.util.HashMap<>(sums); // of a registered class, and never changed
    }

    /** The digest node {@code node}'s share must have, given the sum it had before; {@code before} if not known. */
    public long sumOf(String node, long before) {
      Long s = sums.get(node);
      return s != null ? s : complete ? 0 : before;
    }
  }

  /** A list of the master's events and the tablets they bring into shares, as a blob's content. */
  public record Events(List<Master.Event> events, List<Entering> entering) implements KryoSerializable {
    public Events {
      events = new ArrayList<>(events);
      entering = new ArrayList<>(entering);
    }
  }

  private static void writeEvents(Kryo kryo, Output output, List<Master.Event> events) {
    output.writeVarInt(events == null ? -1 : events.size(), false);
    if (events != null) {
      for (Master.Event e : events) {
        kryo.writeClassAndObject(output, e);
      }
    }
  }

  private static List<Master.Event> readEvents(Kryo kryo, Input input) {
    int n = input.readVarInt(false);
    if (n == -1) {
      return null;
    }
    List<Master.Event> events = new ArrayList<>(Math.min(n, 1 << 16));
    for (int i = 0; i < n; i++) {
      events.add((Master.Event) kryo.readClassAndObject(input));
    }
    return events;
  }

  /**
   * The answer to {@link Master.GetChanges}: the events from {@code from} to {@code to}
   * inline, or ({@code events} null) a blob of {@code chunks} chunks named {@code key}, made
   * by serializer {@code serializerId} with {@code manifest}, holding an {@link Events} from
   * {@code from}, or the {@link Directory} at {@code to}: the asking node's share of it, or the
   * whole if it asked for that; {@code digest} is the digest of the directory at {@code to}.
   * {@code shares}: the tablets entering the asking node's share, and its digest at {@code to}
   * (a complete {@code sums} of that node alone).
   */
  public record Changes(long from, long to, long digest, List<Master.Event> events, String key, int chunks,
      int serializerId, String manifest, Shares shares) implements KryoSerializable {}

  /** Chunk {@code index} of blob {@code key}; null bytes: the master no longer has it. */
  public record Chunk(String key, int index, byte[] bytes) implements KryoSerializable {}

  /** An event, the versions of the directory before and after it, and the tablets it brought into shares. */
  private record Kept(long before, Master.Event event, long after, int weight, List<Entering> entering) {}

  private record Blob(byte[] bytes, int serializerId, String manifest, long madeNanos) {}

  private final Serialization serialization;
  /** False while the master replays its journal: replayed events were published by an earlier master. */
  private boolean live;
  /** The events applied since the last change published, oldest first. */
  private final List<Kept> pending = new ArrayList<>();
  /** The events published, oldest first, for nodes that catch up. */
  private final ArrayDeque<Kept> kept = new ArrayDeque<>();
  private int keptWeight;
  private long blobBytes;
  private final LinkedHashMap<String, Blob> blobs = new LinkedHashMap<>(8, 0.75f, true) {
    @Override
    protected boolean removeEldestEntry(Map.Entry<String, Blob> eldest) {
      if (size() > KEEP_BLOBS || (blobBytes > KEEP_BLOB_BYTES && size() > 1)) {
        blobBytes -= eldest.getValue().bytes().length;
        return true;
      }
      return false;
    }
  };
  private long lastPublished;
  /** The share sums of the directory at the last change published ({@link Directory#shareSums}). */
  private Map<String, Long> lastSums = Map.of();

  DirectoryFeed(Serialization serialization) {
    this.serialization = serialization;
  }

  /** The journal is replayed: events from now on are new. */
  void recovered() {
    live = true;
  }

  /** Event {@code e} took directory {@code before} to {@code after}. */
  void applied(Directory before, Master.Event e, Directory after) {
    if (!live) {
      return;
    }
    pending.add(new Kept(before.version(), e, after.version(), weight(e), entering(before, e)));
  }

  /**
   * The tablets event {@code e} places on a node that may not hold them, as they are in {@code
   * before}: assigned to a new owner, the destination of a move; and both halves of a merge for
   * every node holding either (the merge needs both: its child goes to the left half's owner, and
   * the others drop both). Every other event changes tablets where they are (a split's halves
   * stay with their parent's owner).
   */
  static List<Entering> entering(Directory before, Master.Event e) {
    List<String[]> placed = new ArrayList<>(); // {tablet id, node}
    if (e instanceof Master.TabletsAssigned x) {
      new java.util.TreeMap<>(x.owners()).forEach((id, owner) -> {
        if (!owner.isEmpty() && !owner.equals(before.ownerOf(id))) {
          placed.add(new String[] {id, owner});
        }
      });
    } else if (e instanceof Master.MoveStarted x) {
      placed.add(new String[] {x.tabletId(), x.to()});
    } else if (e instanceof Master.MoveHandedOver x) {
      placed.add(new String[] {x.tabletId(), x.to()});
    } else if (e instanceof Master.TabletsMerged x) {
      java.util.Set<String> holders = new java.util.TreeSet<>(before.placementOf(x.leftId()).nodes());
      holders.addAll(before.placementOf(x.rightId()).nodes());
      for (String node : holders) {
        placed.add(new String[] {x.leftId(), node});
        placed.add(new String[] {x.rightId(), node});
      }
    }
    List<Entering> out = new ArrayList<>(placed.size());
    for (String[] p : placed) {
      TabletInfo t = before.tablet(p[0]);
      if (t != null && !p[1].isEmpty()) {
        out.add(new Entering(0, p[1], t, before.placementOf(p[0])));
      }
    }
    return out;
  }

  /** The entering tablets of {@code kept}, in order, each with the index of its event; of {@code node} only if not null. */
  private static List<Entering> enteringOf(List<Kept> kept, String node) {
    List<Entering> out = new ArrayList<>();
    for (int i = 0; i < kept.size(); i++) {
      for (Entering en : kept.get(i).entering()) {
        if (node == null || en.node().equals(node)) {
          out.add(new Entering(i, en.node(), en.tablet(), en.placement()));
        }
      }
    }
    return out;
  }

  /** The share sums that differ between {@code was} and {@code now} (0 for a share left without tablets). */
  private static Map<String, Long> changedSums(Map<String, Long> was, Map<String, Long> now) {
    Map<String, Long> out = new java.util.HashMap<>();
    now.forEach((node, sum) -> {
      if (!sum.equals(was.get(node))) {
        out.put(node, sum);
      }
    });
    was.keySet().forEach(node -> {
      if (!now.containsKey(node)) {
        out.put(node, 0L);
      }
    });
    return out;
  }

  /**
   * The change to publish now that the directory is {@code d}: the events since the last one
   * published, or, with none, a heartbeat when {@code heartbeat} and none was published for
   * {@link #HEARTBEAT_NANOS}; null: nothing to publish.
   */
  Change next(Directory d, long nowNanos, boolean heartbeat) {
    if (pending.isEmpty()) {
      if (!heartbeat || nowNanos - lastPublished < HEARTBEAT_NANOS) {
        return null;
      }
      return heartbeat(d, nowNanos);
    }
    List<Master.Event> events = new ArrayList<>(pending.size());
    long from = pending.get(0).before();
    long to = pending.get(pending.size() - 1).after();
    Shares shares = new Shares(enteringOf(pending, null), d.tablesDigest(), changedSums(lastSums, d.shareSums()),
        false);
    for (Kept k : pending) {
      events.add(k.event());
      keep(k);
    }
    pending.clear();
    lastPublished = nowNanos;
    lastSums = d.shareSums();
    boolean fits = sizeOf(new Change(from, to, events, null, shares)) <= INLINE_BYTES;
    return fits ? new Change(from, to, events, d, shares) : new Change(from, to, null, d, null);
  }

  /** A change of no events at {@code d}'s version: a node behind notices, a node at it checks its copy. */
  Change heartbeat(Directory d, long nowNanos) {
    lastPublished = nowNanos;
    lastSums = d.shareSums();
    return new Change(d.version(), d.version(), List.of(), d, new Shares(List.of(), d.tablesDigest(), lastSums, true));
  }

  private void keep(Kept k) {
    kept.addLast(k);
    keptWeight += k.weight();
    while (kept.size() > KEEP_EVENTS || (keptWeight > KEEP_WEIGHT && kept.size() > 1)) {
      keptWeight -= kept.removeFirst().weight();
    }
  }

  /** How many tablets {@code e} touches: what keeping it costs. */
  private static int weight(Master.Event e) {
    if (e instanceof Master.TableCreated x) {
      return Math.max(1, x.tablets().size());
    } else if (e instanceof Master.TabletsAssigned x) {
      return Math.max(1, x.owners().size());
    } else if (e instanceof Master.TabletsOpened x) {
      return Math.max(1, x.opened().size());
    }
    return 1;
  }

  /**
   * What node {@code node}'s copy, at version {@code since}, needs to reach {@code d}: the
   * events since, with the tablets they bring into its share, or its share of {@code d} (the
   * whole of {@code d} if {@code node} is empty: a copy of the whole directory).
   */
  Changes since(Directory d, long since, String node, long nowNanos) {
    long to = d.version();
    Shares mine = new Shares(List.of(), d.tablesDigest(), Map.of(node, d.shareSum(node)), true);
    if (since == to) {
      return new Changes(since, to, d.digest(), List.of(), null, 0, 0, "", mine);
    }
    List<Kept> kept = keptSince(since, to);
    if (kept == null) {
      return node.isEmpty() ? blob("d" + to, () -> d, since, d, mine, nowNanos)
          : blob("s" + to + "-" + node, () -> d.share(node), since, d, mine, nowNanos);
    }
    List<Master.Event> events = kept.stream().map(Kept::event).toList();
    Events e = new Events(events, enteringOf(kept, node.isEmpty() ? null : node));
    Shares withEntering = new Shares(e.entering(), mine.tablesDigest(), mine.sums(), true);
    if (sizeOf(e) <= INLINE_BYTES) {
      return new Changes(since, to, d.digest(), events, null, 0, 0, "", withEntering);
    }
    return blob("c" + since + "-" + to + "-" + node, () -> e, since, d, mine, nowNanos); // entering: in the blob
  }

  /**
   * The events kept and pending from version {@code since} to {@code to}, or null if some are
   * no longer kept. A node's copy may be at a version inside a published change (it fetched
   * the whole directory while events waited to be published): the events are kept one by one
   * with their versions, so it catches up from there.
   */
  private List<Kept> keptSince(long since, long to) {
    if (since < 0 || since > to) {
      return null;
    }
    java.util.ArrayDeque<Kept> out = new java.util.ArrayDeque<>();
    long at = to;
    for (int i = pending.size() - 1; i >= 0 && at > since; i--) {
      Kept k = pending.get(i);
      if (k.after() != at) {
        return null;
      }
      out.addFirst(k);
      at = k.before();
    }
    for (Iterator<Kept> it = kept.descendingIterator(); it.hasNext() && at > since; ) {
      Kept k = it.next();
      if (k.after() != at) {
        return null;
      }
      out.addFirst(k);
      at = k.before();
    }
    return at == since ? new ArrayList<>(out) : null;
  }

  private Changes blob(String key, java.util.function.Supplier<Object> made, long from, Directory to, Shares shares,
      long nowNanos) {
    Blob b = blobs.get(key);
    if (b == null) {
      Object content = made.get();
      org.apache.pekko.serialization.Serializer s = serialization.findSerializerFor(content);
      b = new Blob(s.toBinary(content), s.identifier(), Serializers.manifestFor(s, content), nowNanos);
      blobBytes += b.bytes().length;
      blobs.put(key, b);
    }
    int chunks = Math.max(1, (b.bytes().length + CHUNK_BYTES - 1) / CHUNK_BYTES);
    return new Changes(from, to.version(), to.digest(), null, key, chunks, b.serializerId(), b.manifest(), shares);
  }

  /** Chunk {@code index} of blob {@code key}, or one with null bytes if the blob is gone. */
  Chunk chunk(String key, int index) {
    Blob b = blobs.get(key);
    if (b == null || index < 0 || (long) index * CHUNK_BYTES >= Math.max(1, b.bytes().length)) {
      return new Chunk(key, index, null);
    }
    int start = index * CHUNK_BYTES;
    return new Chunk(key, index, Arrays.copyOfRange(b.bytes(), start, Math.min(b.bytes().length,
        start + CHUNK_BYTES)));
  }

  /** Forgets blobs older than {@link #BLOB_NANOS}. */
  void forgetOldBlobs(long nowNanos) {
    for (Iterator<Blob> it = blobs.values().iterator(); it.hasNext(); ) {
      Blob b = it.next();
      if (nowNanos - b.madeNanos() > BLOB_NANOS) {
        blobBytes -= b.bytes().length;
        it.remove();
      }
    }
  }

  private int sizeOf(Object o) {
    return serialization.findSerializerFor(o).toBinary(o).length;
  }
}
