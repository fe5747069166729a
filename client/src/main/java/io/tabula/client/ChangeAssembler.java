package io.tabula.client;

import com.google.bigtable.v2.Mutation;
import com.google.bigtable.v2.ReadChangeStreamResponse.DataChange;
import com.google.bigtable.v2.ReadChangeStreamResponse.MutationChunk;
import com.google.bigtable.v2.Value;
import com.google.protobuf.ByteString;
import io.grpc.Status;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/**
 * Puts a change back together from the {@code DataChange} messages that carry it, as Cloud
 * Bigtable's API lays them out: the first names the row and the commit time (type USER or
 * GARBAGE_COLLECTION), the others are CONTINUATION, the last is {@code done} and carries the
 * token. A value cut into pieces comes as one SetCell chunk per piece, each with {@code
 * chunk_info} (the whole value's size, the piece's offset, whether it is the last), in
 * consecutive chunks; the pieces are joined and checked against the size given. A message out
 * of that order is the node's mistake, failed as INTERNAL. One instance per stream of one
 * partition; not thread-safe.
 */
final class ChangeAssembler {
  /** The most bytes reserved at once for a value in pieces, whatever size its first piece announces. */
  private static final int MAX_RESERVED = 16 << 20;

  private ByteString key;
  private Instant commitTime;
  private final List<Change.Mutation> mutations = new ArrayList<>();
  private Mutation.SetCell piecesOf;
  private ByteString.Output pieces;
  private long piecesSize;

  /** True between the first message of a change and its last. */
  boolean inChange() {
    return key != null;
  }

  /** Drops a change begun and not finished (its stream broke; it will be read again whole). */
  void reset() {
    key = null;
    commitTime = null;
    mutations.clear();
    piecesOf = null;
    pieces = null;
  }

  /** Takes the next message; answers the change it completes, or null if more of it is to come. */
  Change accept(DataChange d) {
    if (d.getType() == DataChange.Type.CONTINUATION) {
      if (!inChange()) {
        throw broken("a CONTINUATION message with no change begun");
      }
    } else {
      if (inChange()) {
        throw broken("a change begun before the one of row " + key.toStringUtf8() + " was done");
      }
      if (!d.hasCommitTimestamp()) {
        throw broken("a change of row " + d.getRowKey().toStringUtf8() + " without a commit time");
      }
      key = d.getRowKey();
      commitTime = Instant.ofEpochSecond(d.getCommitTimestamp().getSeconds(), d.getCommitTimestamp().getNanos());
    }
    for (MutationChunk chunk : d.getChunksList()) {
      if (chunk.hasChunkInfo()) {
        piece(chunk);
      } else if (pieces != null) {
        throw broken("a mutation between the pieces of a value");
      } else {
        mutations.add(of(chunk.getMutation()));
      }
    }
    if (!d.getDone()) {
      return null;
    }
    if (pieces != null) {
      throw broken("a change done before the last piece of its value");
    }
    Change c = new Change(key, commitTime, d.getToken(), mutations);
    reset();
    return c;
  }

  private void piece(MutationChunk chunk) {
    MutationChunk.ChunkInfo info = chunk.getChunkInfo();
    if (!chunk.getMutation().hasSetCell()) {
      throw broken("a piece of a value that is not a SetCell");
    }
    Mutation.SetCell cell = chunk.getMutation().getSetCell();
    if (info.getChunkedValueOffset() == 0) {
      if (pieces != null) {
        throw broken("a value begun before the last one's last piece");
      }
      piecesOf = cell;
      piecesSize = info.getChunkedValueSize();
      pieces = ByteString.newOutput((int) Math.min(Math.max(piecesSize, 0), MAX_RESERVED));
    } else if (pieces == null || info.getChunkedValueOffset() != pieces.size()) {
      throw broken("a piece at offset " + info.getChunkedValueOffset() + " where "
          + (pieces == null ? "no value was begun" : "the value has " + pieces.size() + " bytes"));
    }
    try {
      cell.getValue().writeTo(pieces);
    } catch (IOException e) {
      throw new UncheckedIOException(e); // a ByteString.Output does no I/O
    }
    if (info.getLastChunk()) {
      if (pieces.size() != piecesSize) {
        throw broken("a value of " + pieces.size() + " bytes announced as " + piecesSize);
      }
      mutations.add(new Change.SetCell(piecesOf.getFamilyName(), piecesOf.getColumnQualifier(),
          piecesOf.getTimestampMicros(), pieces.toByteString()));
      piecesOf = null;
      pieces = null;
    }
  }

  /** The client's form of one mutation of a change. */
  static Change.Mutation of(Mutation m) {
    return switch (m.getMutationCase()) {
      case SET_CELL -> new Change.SetCell(m.getSetCell().getFamilyName(), m.getSetCell().getColumnQualifier(),
          m.getSetCell().getTimestampMicros(), m.getSetCell().getValue());
      case DELETE_FROM_COLUMN -> new Change.DeleteCells(m.getDeleteFromColumn().getFamilyName(),
          m.getDeleteFromColumn().getColumnQualifier(), m.getDeleteFromColumn().getTimeRange()
              .getStartTimestampMicros(), m.getDeleteFromColumn().getTimeRange().getEndTimestampMicros());
      case DELETE_FROM_FAMILY -> new Change.DeleteFamily(m.getDeleteFromFamily().getFamilyName());
      case MERGE_TO_CELL -> new Change.MergeToCell(m.getMergeToCell().getFamilyName(),
          bytes(m.getMergeToCell().getColumnQualifier()), m.getMergeToCell().getTimestamp().getRawTimestampMicros(),
          bytes(m.getMergeToCell().getInput()));
      default -> throw broken("a mutation a change does not carry: " + m.getMutationCase());
    };
  }

  /** A value's bytes: raw or bytes as they are, a 64-bit integer big-endian (how aggregate states store it). */
  private static ByteString bytes(Value v) {
    return switch (v.getKindCase()) {
      case RAW_VALUE -> v.getRawValue();
      case BYTES_VALUE -> v.getBytesValue();
      case INT_VALUE -> ByteString.copyFrom(java.nio.ByteBuffer.allocate(Long.BYTES).putLong(v.getIntValue()).array());
      default -> throw broken("a merge value of kind " + v.getKindCase());
    };
  }

  private static TabulaException broken(String what) {
    return new TabulaException(Status.Code.INTERNAL, "the change stream is out of order: " + what);
  }
}
