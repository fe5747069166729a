package io.tabula.persistence.memtable;

import io.tabula.persistence.iterator.CellIterator;
import io.tabula.persistence.model.CellKey;
import io.tabula.persistence.memtable.ValueSlab.Slice;
import java.util.Arrays;

/**
 * The memtable's sorted map from {@link CellKey} to value: a copy-on-write B+tree. A node
 * holds up to {@value #FANOUT} keys in arrays, next to each key its row's first 16 bytes
 * ({@link CellKey#rowWord0()}, {@link CellKey#rowWord1()}), so a search compares words in
 * one or two cache lines and reads a key object only on a tie.
 *
 * <p>Why not {@link java.util.concurrent.ConcurrentSkipListMap}: with random row keys each
 * insert into a skip list of some 16,000 entries followed about 25 pointers, almost every
 * one a cache miss while requests and compactions crowd the cache. Inserts took a third of
 * a node's CPU under random writes. Here an insert reads three or four nodes and copies
 * the path to its leaf (about two kilobytes of short-lived arrays).
 *
 * <p>Concurrency: writers take turns ({@link #put} and {@link #remove} are synchronized);
 * each change builds new nodes along one path and publishes a new root, so a node is never
 * changed once a reader can see it. A reader works on the root it read: a consistent
 * snapshot, with no lock.
 */
final class CellTree {
  static final int FANOUT = 32;

  /** Entries of a leaf, or child separators of an inner node (index 0 unused for routing). */
  private abstract static sealed class Node permits Leaf, Inner {
    final long[] w0;
    final long[] w1;
    final CellKey[] keys;

    Node(long[] w0, long[] w1, CellKey[] keys) {
      this.w0 = w0;
      this.w1 = w1;
      this.keys = keys;
    }

    final int size() {
      return keys.length;
    }

    /** Compares entry {@code i} with {@code k}, whose row words are {@code a} and {@code b}. */
    final int compareAt(int i, CellKey k, long a, long b) {
      if (w0[i] != a) {
        return Long.compareUnsigned(w0[i], a);
      }
      if (w1[i] != b) {
        return Long.compareUnsigned(w1[i], b);
      }
      return CellKey.compare(keys[i], k);
    }

    /** The first index whose key is at least {@code k} ({@link #size()} if none). */
    final int lowerBound(CellKey k, long a, long b) {
      int lo = 0;
      int hi = keys.length;
      while (lo < hi) {
        int mid = (lo + hi) >>> 1;
        if (compareAt(mid, k, a, b) < 0) {
          lo = mid + 1;
        } else {
          hi = mid;
        }
      }
      return lo;
    }
  }

  private static final class Leaf extends Node {
    final Slice[] values;

    Leaf(long[] w0, long[] w1, CellKey[] keys, Slice[] values) {
      super(w0, w1, keys);
      this.values = values;
    }
  }

  /**
   * {@code keys[i]} is at most every key under {@code children[i]}, for {@code i > 0}; slot 0
   * is not used for routing. A node's slot 0 is a true lower bound whenever the node is the
   * right part of a split, which is the only time a parent copies it.
   */
  private static final class Inner extends Node {
    final Node[] children;

    Inner(long[] w0, long[] w1, CellKey[] keys, Node[] children) {
      super(w0, w1, keys);
      this.children = children;
    }

    /** The child whose keys' range holds {@code k}. */
    int route(CellKey k, long a, long b) {
      // The last child whose separator is at most k: one before the first separator above it.
      int lo = 1;
      int hi = keys.length;
      while (lo < hi) {
        int mid = (lo + hi) >>> 1;
        if (compareAt(mid, k, a, b) <= 0) {
          lo = mid + 1;
        } else {
          hi = mid;
        }
      }
      return lo - 1;
    }
  }

  private static final Leaf EMPTY = new Leaf(new long[0], new long[0], new CellKey[0], new Slice[0]);

  private volatile Node root = EMPTY;
  private volatile int size;

  /** Entries in the tree. */
  int size() {
    return size;
  }

  /** Adds the entry unless an equal key is there; returns whether it was added. */
  synchronized boolean put(CellKey k, Slice value) {
    long a = k.rowWord0();
    long b = k.rowWord1();
    Node[] split = new Node[1];
    Node r = insert(root, k, a, b, value, split);
    if (r == null) {
      return false;
    }
    if (split[0] != null) {
      r = new Inner(new long[] {r.w0[0], split[0].w0[0]}, new long[] {r.w1[0], split[0].w1[0]},
          new CellKey[] {r.keys[0], split[0].keys[0]}, new Node[] {r, split[0]});
    }
    root = r;
    size++; // after the root: a reader that sees the new size finds the entry
    return true;
  }

  /**
   * The new version of {@code n} with the entry in it, or null if the key is already there.
   * If the new version would hold more than {@link #FANOUT} keys it is returned in two
   * halves: the left one, and the right one in {@code split[0]}.
   */
  private static Node insert(Node n, CellKey k, long a, long b, Slice value, Node[] split) {
    if (n instanceof Leaf leaf) {
      int i = leaf.lowerBound(k, a, b);
      if (i < leaf.size() && leaf.compareAt(i, k, a, b) == 0) {
        return null;
      }
      Leaf grown = new Leaf(withLong(leaf.w0, i, a), withLong(leaf.w1, i, b), with(leaf.keys, i, k),
          with(leaf.values, i, value));
      return splitIfFull(grown, i, split);
    }
    Inner in = (Inner) n;
    int c = in.route(k, a, b);
    Node[] childSplit = new Node[1];
    Node child = insert(in.children[c], k, a, b, value, childSplit);
    if (child == null) {
      return null;
    }
    Node[] children = in.children.clone();
    children[c] = child;
    Node right = childSplit[0];
    if (right == null) {
      return new Inner(in.w0, in.w1, in.keys, children);
    }
    int at = c + 1;
    Inner grown = new Inner(withLong(in.w0, at, right.w0[0]), withLong(in.w1, at, right.w1[0]),
        with(in.keys, at, right.keys[0]), with(children, at, right));
    return splitIfFull(grown, at, split);
  }

  /**
   * {@code n} itself if it fits, else its left part with the right part in {@code split[0]}.
   * Keys added in ascending order (a sequential load) fill nodes: a node that grew at its
   * end keeps all but the new key.
   */
  private static Node splitIfFull(Node n, int grewAt, Node[] split) {
    int size = n.size();
    if (size <= FANOUT) {
      return n;
    }
    int cut = grewAt == size - 1 ? size - 1 : size / 2;
    split[0] = part(n, cut, size);
    return part(n, 0, cut);
  }

  private static Node part(Node n, int from, int to) {
    long[] w0 = Arrays.copyOfRange(n.w0, from, to);
    long[] w1 = Arrays.copyOfRange(n.w1, from, to);
    CellKey[] keys = Arrays.copyOfRange(n.keys, from, to);
    if (n instanceof Leaf leaf) {
      return new Leaf(w0, w1, keys, Arrays.copyOfRange(leaf.values, from, to));
    }
    return new Inner(w0, w1, keys, Arrays.copyOfRange(((Inner) n).children, from, to));
  }

  /**
   * Takes out the entry of {@code k}; returns its value, or null if it was not there. Nodes
   * are not merged: removals are rare (writes the commit log failed), and a leaf left empty
   * is skipped by iterators.
   */
  synchronized Slice remove(CellKey k) {
    Slice[] removed = new Slice[1];
    Node r = delete(root, k, k.rowWord0(), k.rowWord1(), removed);
    if (r == null) {
      return null;
    }
    root = r;
    size--;
    return removed[0];
  }

  private static Node delete(Node n, CellKey k, long a, long b, Slice[] removed) {
    if (n instanceof Leaf leaf) {
      int i = leaf.lowerBound(k, a, b);
      if (i == leaf.size() || leaf.compareAt(i, k, a, b) != 0) {
        return null;
      }
      removed[0] = leaf.values[i];
      return new Leaf(without(leaf.w0, i), without(leaf.w1, i), without(leaf.keys, i), without(leaf.values, i));
    }
    Inner in = (Inner) n;
    int c = in.route(k, a, b);
    Node child = delete(in.children[c], k, a, b, removed);
    if (child == null) {
      return null;
    }
    // Separators stay as they are: each is still at most every key left under its child.
    Node[] children = in.children.clone();
    children[c] = child;
    return new Inner(in.w0, in.w1, in.keys, children);
  }

  /** A cursor over the tree as it was at the last {@link Cursor#seek} or {@link Cursor#seekToFirst}. */
  Cursor cursor() {
    return new Cursor();
  }

  final class Cursor implements CellIterator {
    /** The path from the root to the current leaf, and the position taken in each node. */
    private Node[] path = new Node[8];
    private int[] pos = new int[8];
    private int depth = -1;
    private Leaf leaf;
    private int at;

    @Override
    public void seekToFirst() {
      descend(root, null, 0, 0);
    }

    @Override
    public void seek(CellKey target) {
      descend(root, target, target.rowWord0(), target.rowWord1());
    }

    private void descend(Node n, CellKey target, long a, long b) {
      depth = -1;
      while (n instanceof Inner in) {
        push(in, target == null ? 0 : in.route(target, a, b));
        n = in.children[pos[depth]];
      }
      leaf = (Leaf) n;
      at = target == null ? 0 : leaf.lowerBound(target, a, b);
      settle();
    }

    private void push(Node n, int p) {
      depth++;
      if (depth == path.length) {
        path = Arrays.copyOf(path, depth * 2);
        pos = Arrays.copyOf(pos, depth * 2);
      }
      path[depth] = n;
      pos[depth] = p;
    }

    /** Moves on to the next leaf that has an entry while {@code at} is past the current one's end. */
    private void settle() {
      while (leaf != null && at >= leaf.size()) {
        while (depth >= 0 && pos[depth] + 1 >= path[depth].size()) {
          depth--;
        }
        if (depth < 0) {
          leaf = null;
          return;
        }
        pos[depth]++;
        Node n = ((Inner) path[depth]).children[pos[depth]];
        while (n instanceof Inner in) {
          push(in, 0);
          n = in.children[0];
        }
        leaf = (Leaf) n;
        at = 0;
      }
    }

    @Override
    public boolean valid() {
      return leaf != null;
    }

    @Override
    public void next() {
      at++;
      settle();
    }

    @Override
    public CellKey key() {
      return leaf.keys[at];
    }

    @Override
    public byte[] value() {
      return leaf.values[at].bytes();
    }
  }

  private static long[] withLong(long[] a, int i, long v) {
    long[] out = new long[a.length + 1];
    System.arraycopy(a, 0, out, 0, i);
    out[i] = v;
    System.arraycopy(a, i, out, i + 1, a.length - i);
    return out;
  }

  private static <T> T[] with(T[] a, int i, T v) {
    T[] out = Arrays.copyOf(a, a.length + 1);
    System.arraycopy(a, i, out, i + 1, a.length - i);
    out[i] = v;
    return out;
  }

  private static long[] without(long[] a, int i) {
    long[] out = new long[a.length - 1];
    System.arraycopy(a, 0, out, 0, i);
    System.arraycopy(a, i + 1, out, i, a.length - i - 1);
    return out;
  }

  private static <T> T[] without(T[] a, int i) {
    T[] out = Arrays.copyOf(a, a.length - 1);
    System.arraycopy(a, i + 1, out, i, a.length - i - 1);
    return out;
  }
}
