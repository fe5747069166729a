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
  /** Blobs kept for nodes fetching them: at most this many, none older than {@link #BLOB_NANOS}. */
  static final int KEEP_BLOBS = 4;
  static final long BLOB_NANOS = 60_000_000_000L;
  /** With nothing changed, a change of no events is published this often: a node behind notices. */
  static final long HEARTBEAT_NANOS = 2_000_000_000L;

  /**
   * Published on the directory topic: the events that take a directory from version
   * {@code from} to {@code to}, or null when they are too large to publish (a node asks for
   * them). {@code from == to} with no events is a heartbeat. {@code after} is the directory
   * they make, given to a subscriber in the master's own JVM only (never serialized), so the
   * master's node shares the master's copy instead of building its own. {@code digest} is the
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

    Change(long from, long to, List<Master.Event> events, Directory after) {
      this(from, to, events, after, after == null ? 0 : after.digest());
    }

    private Change(long from, long to, List<Master.Event> events, Directory after, long digest) {
      this.from = from;
      this.to = to;
      this.events = events;
      this.after = after;
      this.digest = digest;
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
      }

      @Override
      public Change read(Kryo kryo, Input input, Class<? extends Change> type) {
        long from = input.readLong();
        long to = input.readLong();
        long digest = input.readLong();
        return new Change(from, to, readEvents(kryo, input), null, digest);
      }
    }
  }

  /** A list of the master's events, as a blob's content. */
  @DefaultSerializer(Events.KryoBytes.class)
  public record Events(List<Master.Event> events) implements KryoSerializable {
    /** Kryo's serializer: the count, then each event with its class. Stateless. */
    public static final class KryoBytes extends Serializer<Events> {
      public KryoBytes() {
        setImmutable(true);
      }

      @Override
      public void write(Kryo kryo, Output output, Events e) {
        writeEvents(kryo, output, e.events);
      }

      @Override
      public Events read(Kryo kryo, Input input, Class<? extends Events> type) {
        return new Events(readEvents(kryo, input));
      }
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
   * {@code from} or the whole {@link Directory} at {@code to}; {@code digest} is the digest of
   * the directory at {@code to}.
   */
  public record Changes(long from, long to, long digest, List<Master.Event> events, String key, int chunks,
      int serializerId, String manifest) implements KryoSerializable {}

  /** Chunk {@code index} of blob {@code key}; null bytes: the master no longer has it. */
  public record Chunk(String key, int index, byte[] bytes) implements KryoSerializable {}

  /** An event, and the versions of the directory before and after it. */
  private record Kept(long before, Master.Event event, long after, int weight) {}

  private record Blob(byte[] bytes, int serializerId, String manifest, long madeNanos) {}

  private final Serialization serialization;
  /** False while the master replays its journal: replayed events were published by an earlier master. */
  private boolean live;
  /** The events applied since the last change published, oldest first. */
  private final List<Kept> pending = new ArrayList<>();
  /** The events published, oldest first, for nodes that catch up. */
  private final ArrayDeque<Kept> kept = new ArrayDeque<>();
  private int keptWeight;
  private final LinkedHashMap<String, Blob> blobs = new LinkedHashMap<>(8, 0.75f, true) {
    @Override
    protected boolean removeEldestEntry(Map.Entry<String, Blob> eldest) {
      return size() > KEEP_BLOBS;
    }
  };
  private long lastPublished;

  DirectoryFeed(Serialization serialization) {
    this.serialization = serialization;
  }

  /** The journal is replayed: events from now on are new. */
  void recovered() {
    live = true;
  }

  /** Event {@code e} took the directory from version {@code before} to {@code after}. */
  void applied(long before, Master.Event e, long after) {
    if (!live) {
      return;
    }
    pending.add(new Kept(before, e, after, weight(e)));
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
      lastPublished = nowNanos;
      return new Change(d.version(), d.version(), List.of(), d);
    }
    List<Master.Event> events = new ArrayList<>(pending.size());
    long from = pending.get(0).before();
    long to = pending.get(pending.size() - 1).after();
    for (Kept k : pending) {
      events.add(k.event());
      keep(k);
    }
    pending.clear();
    lastPublished = nowNanos;
    boolean fits = sizeOf(new Change(from, to, events, null)) <= INLINE_BYTES;
    return new Change(from, to, fits ? events : null, d);
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

  /** What a node whose copy is at version {@code since} needs to reach {@code d}. */
  Changes since(Directory d, long since, long nowNanos) {
    long to = d.version();
    if (since == to) {
      return new Changes(since, to, d.digest(), List.of(), null, 0, 0, "");
    }
    List<Master.Event> events = eventsSince(since, to);
    if (events == null) {
      return blob("d" + to, d, since, d, nowNanos);
    }
    if (sizeOf(new Events(events)) <= INLINE_BYTES) {
      return new Changes(since, to, d.digest(), events, null, 0, 0, "");
    }
    return blob("c" + since + "-" + to, new Events(events), since, d, nowNanos);
  }

  /**
   * The events kept and pending from version {@code since} to {@code to}, or null if some are
   * no longer kept. A node's copy may be at a version inside a published change (it fetched
   * the whole directory while events waited to be published): the events are kept one by one
   * with their versions, so it catches up from there.
   */
  private List<Master.Event> eventsSince(long since, long to) {
    if (since < 0 || since > to) {
      return null;
    }
    java.util.ArrayDeque<Master.Event> out = new java.util.ArrayDeque<>();
    long at = to;
    for (int i = pending.size() - 1; i >= 0 && at > since; i--) {
      Kept k = pending.get(i);
      if (k.after() != at) {
        return null;
      }
      out.addFirst(k.event());
      at = k.before();
    }
    for (Iterator<Kept> it = kept.descendingIterator(); it.hasNext() && at > since; ) {
      Kept k = it.next();
      if (k.after() != at) {
        return null;
      }
      out.addFirst(k.event());
      at = k.before();
    }
    return at == since ? new ArrayList<>(out) : null;
  }

  private Changes blob(String key, Object content, long from, Directory to, long nowNanos) {
    Blob b = blobs.get(key);
    if (b == null) {
      org.apache.pekko.serialization.Serializer s = serialization.findSerializerFor(content);
      b = new Blob(s.toBinary(content), s.identifier(), Serializers.manifestFor(s, content), nowNanos);
      blobs.put(key, b);
    }
    int chunks = Math.max(1, (b.bytes().length + CHUNK_BYTES - 1) / CHUNK_BYTES);
    return new Changes(from, to.version(), to.digest(), null, key, chunks, b.serializerId(), b.manifest());
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
      if (nowNanos - it.next().madeNanos() > BLOB_NANOS) {
        it.remove();
      }
    }
  }

  private int sizeOf(Object o) {
    return serialization.findSerializerFor(o).toBinary(o).length;
  }
}
