package io.tabula.cluster.grpc;

import com.google.bigtable.v2.ReadChangeStreamResponse;
import com.google.bigtable.v2.ReadChangeStreamResponse.DataChange;
import com.google.bigtable.v2.ReadChangeStreamResponse.MutationChunk;
import com.google.bigtable.v2.RowRange;
import com.google.bigtable.v2.StreamContinuationToken;
import com.google.bigtable.v2.StreamPartition;
import com.google.bigtable.v2.TimestampRange;
import com.google.bigtable.v2.Value;
import com.google.protobuf.ByteString;
import com.google.protobuf.Timestamp;
import io.tabula.persistence.changes.Change;
import io.tabula.persistence.model.Mutation;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;

/**
 * A tablet's changes as {@code ReadChangeStream} answers them (docs/change-streams.md), in the
 * shapes the official clients accept: a change is one {@code DataChange}, or several when its
 * mutations pass {@link #MESSAGE_BYTES}: the first carries the row, the commit time, the type
 * (USER, from this instance's one cluster) and a tiebreaker of 0; the others are CONTINUATION;
 * the last is {@code done} and carries the token and the low watermark. A value larger than a
 * message is cut into pieces, each alone at the end of one message and the next piece first in
 * the next ({@code chunk_info}). A row delete is one family delete per family of the table
 * (the clients know no row delete in a change); idempotency tokens are Tabula's own and are not
 * sent. An aggregate operand is sent as the {@code MergeToCell} of its state, as it was applied.
 * Stateless.
 */
final class ChangeResponses {
  private ChangeResponses() {}

  /** Most bytes of mutations one DataChange message carries. */
  static final int MESSAGE_BYTES = 1 << 20;

  static Timestamp timestamp(long micros) {
    return Timestamp.newBuilder().setSeconds(Math.floorDiv(micros, 1_000_000))
        .setNanos((int) Math.floorMod(micros, 1_000_000) * 1000).build();
  }

  static long micros(Timestamp t) {
    return Math.addExact(Math.multiplyExact(t.getSeconds(), 1_000_000L), t.getNanos() / 1000);
  }

  static StreamPartition partition(byte[] start, byte[] end) {
    return StreamPartition.newBuilder().setRowRange(RowRange.newBuilder().setStartKeyClosed(ByteString.copyFrom(start))
        .setEndKeyOpen(ByteString.copyFrom(end))).build();
  }

  static StreamContinuationToken token(StreamPartition p, ChangeToken t) {
    return StreamContinuationToken.newBuilder().setPartition(p).setToken(t.encode()).build();
  }

  static ReadChangeStreamResponse heartbeat(StreamPartition p, ChangeToken t, long watermarkMicros) {
    return ReadChangeStreamResponse.newBuilder().setHeartbeat(ReadChangeStreamResponse.Heartbeat.newBuilder()
        .setContinuationToken(token(p, t)).setEstimatedLowWatermark(timestamp(watermarkMicros))).build();
  }

  /** The end of a stream that reached its end time: OK, no tokens. */
  static ReadChangeStreamResponse finished() {
    return ReadChangeStreamResponse.newBuilder().setCloseStream(ReadChangeStreamResponse.CloseStream.newBuilder()
        .setStatus(com.google.rpc.Status.newBuilder().setCode(com.google.rpc.Code.OK_VALUE))).build();
  }

  /** A partition that goes on elsewhere: where (new partitions) and from which tokens, one each, OUT_OF_RANGE. */
  static ReadChangeStreamResponse moved(String why, List<StreamContinuationToken> tokens,
      List<StreamPartition> newPartitions) {
    return ReadChangeStreamResponse.newBuilder().setCloseStream(ReadChangeStreamResponse.CloseStream.newBuilder()
        .setStatus(com.google.rpc.Status.newBuilder().setCode(com.google.rpc.Code.OUT_OF_RANGE_VALUE).setMessage(why))
        .addAllContinuationTokens(tokens).addAllNewPartitions(newPartitions)).build();
  }

  /**
   * The messages of one change; none if it holds no mutation a client is sent (only
   * idempotency tokens). {@code families}: the table's, for a row delete.
   */
  static List<ReadChangeStreamResponse> dataChange(Change c, String clusterId, ChangeToken token,
      long watermarkMicros, Collection<String> families) {
    List<Mutation> ms = c.mutation().mutations();
    List<List<MutationChunk>> messages = new ArrayList<>();
    List<MutationChunk> current = new ArrayList<>();
    long bytes = 0;
    for (Mutation m : ms) {
      for (com.google.bigtable.v2.Mutation out : proto(m, families)) {
        int size = out.getSerializedSize();
        if (size > MESSAGE_BYTES && out.hasSetCell()) {
          if (!current.isEmpty()) {
            messages.add(current);
            current = new ArrayList<>();
          }
          messages.addAll(pieces(out.getSetCell()));
          bytes = 0;
          continue;
        }
        if (!current.isEmpty() && bytes + size > MESSAGE_BYTES) {
          messages.add(current);
          current = new ArrayList<>();
          bytes = 0;
        }
        current.add(MutationChunk.newBuilder().setMutation(out).build());
        bytes += size;
      }
    }
    if (!current.isEmpty()) {
      messages.add(current);
    }
    List<ReadChangeStreamResponse> out = new ArrayList<>(messages.size());
    for (int i = 0; i < messages.size(); i++) {
      DataChange.Builder d = DataChange.newBuilder().addAllChunks(messages.get(i));
      if (i == 0) {
        d.setType(DataChange.Type.USER).setSourceClusterId(clusterId).setRowKey(ByteString.copyFrom(c.mutation().row()))
            .setCommitTimestamp(timestamp(c.commitMicros())).setTiebreaker(0);
      } else {
        d.setType(DataChange.Type.CONTINUATION);
      }
      if (i == messages.size() - 1) {
        d.setDone(true).setToken(token.encode()).setEstimatedLowWatermark(timestamp(watermarkMicros));
      }
      out.add(ReadChangeStreamResponse.newBuilder().setDataChange(d).build());
    }
    return out;
  }

  /** A SetCell too large for one message, one piece per message. */
  private static List<List<MutationChunk>> pieces(com.google.bigtable.v2.Mutation.SetCell s) {
    ByteString value = s.getValue();
    int piece = MESSAGE_BYTES - 64 * 1024 - s.getColumnQualifier().size(); // room for the cell's other fields
    List<List<MutationChunk>> out = new ArrayList<>();
    for (int off = 0; off < value.size(); off += piece) {
      int end = Math.min(value.size(), off + piece);
      MutationChunk.ChunkInfo info = MutationChunk.ChunkInfo.newBuilder().setChunkedValueSize(value.size())
          .setChunkedValueOffset(off).setLastChunk(end == value.size()).build();
      com.google.bigtable.v2.Mutation m = com.google.bigtable.v2.Mutation.newBuilder().setSetCell(s.toBuilder()
          .setValue(value.substring(off, end))).build();
      out.add(List.of(MutationChunk.newBuilder().setChunkInfo(info).setMutation(m).build()));
    }
    return out;
  }

  /** The protobuf mutations of one applied mutation: none for a token, one per family for a row delete. */
  private static List<com.google.bigtable.v2.Mutation> proto(Mutation m, Collection<String> families) {
    com.google.bigtable.v2.Mutation.Builder b = com.google.bigtable.v2.Mutation.newBuilder();
    if (m instanceof Mutation.SetCell s) {
      return List.of(b.setSetCell(com.google.bigtable.v2.Mutation.SetCell.newBuilder().setFamilyName(s.family())
          .setColumnQualifier(ByteString.copyFrom(s.qualifier())).setTimestampMicros(s.timestamp())
          .setValue(ByteString.copyFrom(s.value()))).build());
    }
    if (m instanceof Mutation.DeleteFromColumn d) {
      TimestampRange.Builder r = TimestampRange.newBuilder().setStartTimestampMicros(d.startInclusive());
      if (d.endExclusive() != Mutation.DeleteFromColumn.ALL_VERSIONS_END) {
        r.setEndTimestampMicros(d.endExclusive());
      }
      return List.of(b.setDeleteFromColumn(com.google.bigtable.v2.Mutation.DeleteFromColumn.newBuilder()
          .setFamilyName(d.family()).setColumnQualifier(ByteString.copyFrom(d.qualifier())).setTimeRange(r)).build());
    }
    if (m instanceof Mutation.DeleteFromFamily f) {
      return List.of(familyDelete(f.family()));
    }
    if (m instanceof Mutation.MergeToCell mc) {
      return List.of(b.setMergeToCell(com.google.bigtable.v2.Mutation.MergeToCell.newBuilder()
          .setFamilyName(mc.family()).setColumnQualifier(Value.newBuilder().setRawValue(ByteString.copyFrom(mc.qualifier())))
          .setTimestamp(Value.newBuilder().setRawTimestampMicros(mc.timestamp()))
          .setInput(Value.newBuilder().setRawValue(ByteString.copyFrom(mc.state())))).build());
    }
    if (m instanceof Mutation.Token || m instanceof Mutation.AddToCell) {
      return List.of(); // Tabula's own idempotency tokens; an AddToCell is applied as a MergeToCell
    }
    List<com.google.bigtable.v2.Mutation> out = new ArrayList<>(families.size());
    families.forEach(f -> out.add(familyDelete(f)));
    return out;
  }

  private static com.google.bigtable.v2.Mutation familyDelete(String family) {
    return com.google.bigtable.v2.Mutation.newBuilder().setDeleteFromFamily(
        com.google.bigtable.v2.Mutation.DeleteFromFamily.newBuilder().setFamilyName(family)).build();
  }
}
