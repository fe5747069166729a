package io.tabula.cluster.hostile;

import com.google.bigtable.admin.v2.BigtableTableAdminProto;
import com.google.bigtable.admin.v2.ColumnFamily;
import com.google.bigtable.admin.v2.CreateTableRequest;
import com.google.bigtable.admin.v2.DeleteTableRequest;
import com.google.bigtable.admin.v2.DropRowRangeRequest;
import com.google.bigtable.admin.v2.GcRule;
import com.google.bigtable.admin.v2.GetTableRequest;
import com.google.bigtable.admin.v2.ModifyColumnFamiliesRequest;
import com.google.bigtable.admin.v2.Table;
import com.google.bigtable.v2.BigtableProto;
import com.google.bigtable.v2.CheckAndMutateRowRequest;
import com.google.bigtable.v2.MutateRowRequest;
import com.google.bigtable.v2.MutateRowsRequest;
import com.google.bigtable.v2.Mutation;
import com.google.bigtable.v2.PingAndWarmRequest;
import com.google.bigtable.v2.ReadModifyWriteRowRequest;
import com.google.bigtable.v2.ReadModifyWriteRule;
import com.google.bigtable.v2.ReadRowsRequest;
import com.google.bigtable.v2.RowFilter;
import com.google.bigtable.v2.RowRange;
import com.google.bigtable.v2.RowSet;
import com.google.bigtable.v2.SampleRowKeysRequest;
import com.google.bigtable.v2.TimestampRange;
import com.google.protobuf.ByteString;
import com.google.protobuf.CodedOutputStream;
import com.google.protobuf.Descriptors.FileDescriptor;
import com.google.protobuf.Descriptors.MethodDescriptor;
import com.google.protobuf.Descriptors.ServiceDescriptor;
import com.google.protobuf.DynamicMessage;
import com.google.protobuf.Message;
import com.google.protobuf.UnknownFieldSet;
import io.tabula.protocol.locations.LocateRequest;
import io.tabula.protocol.locations.LocationsProto;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.function.Supplier;

/**
 * Malformed, extreme and random requests for every method of the node's services (Cloud
 * Bigtable data and admin, Tabula's locations), as raw bytes. Each comes from a seeded
 * {@link Random}, so a seed replays the same requests. Five kinds:
 *
 * <ul>
 *   <li>{@link Kind#RANDOM}: random bytes of random length (mostly not protobuf at all);
 *   <li>{@link Kind#TRUNCATED}: a valid request cut short;
 *   <li>{@link Kind#FLIPPED}: a valid request with a few bytes changed;
 *   <li>{@link Kind#EXTREME}: a message built to hit a limit or an edge (names that are not
 *       UTF-8, keys and values of every awkward size, filters and GC rules nested past
 *       protobuf's and Tabula's limits, regexes that would expand to millions of states,
 *       row sets and batches past Cloud Bigtable's counts, both check-and-mutate branches
 *       empty, timestamps that are negative or not milliseconds, unknown fields, every oneof
 *       left unset);
 *   <li>{@link Kind#VALID}: a well-formed request (that may still be refused: a missing
 *       table, an unknown family).
 * </ul>
 */
final class HostileRequests {
  static final String INSTANCE = "projects/p/instances/i";
  static final String TABLE = INSTANCE + "/tables/t";
  static final String FAMILY = "f";

  enum Kind { RANDOM, TRUNCATED, FLIPPED, EXTREME, VALID }

  /** One request: the method (full gRPC name and type) and its bytes, and what it is for people. */
  record Request(String service, MethodDescriptor method, Kind kind, String what, byte[] bytes) {
    String rpc() {
      return service.substring(service.lastIndexOf('.') + 1) + "/" + method.getName();
    }
  }

  private final Random random;
  private final List<ServiceMethod> methods = new ArrayList<>();
  private final List<Supplier<Request>> extremes = new ArrayList<>();

  private record ServiceMethod(ServiceDescriptor service, MethodDescriptor method) {}

  HostileRequests(long seed) {
    this.random = new Random(seed);
    for (FileDescriptor f : List.of(BigtableProto.getDescriptor(), BigtableTableAdminProto.getDescriptor(),
        LocationsProto.getDescriptor())) {
      for (ServiceDescriptor s : f.getServices()) {
        for (MethodDescriptor m : s.getMethods()) {
          methods.add(new ServiceMethod(s, m));
        }
      }
    }
    addExtremes();
  }

  /** Creates the test's table (family {@link #FAMILY}) through raw admin bytes. */
  static void createTable(io.grpc.Channel channel) {
    byte[] create = CreateTableRequest.newBuilder().setParent(INSTANCE).setTableId("t")
        .setTable(Table.newBuilder().putColumnFamilies(FAMILY, ColumnFamily.getDefaultInstance()))
        .build().toByteArray();
    io.grpc.stub.ClientCalls.blockingUnaryCall(channel, io.tabula.cluster.RawGrpc.method(
        "google.bigtable.admin.v2.BigtableTableAdmin", "CreateTable", io.grpc.MethodDescriptor.MethodType.UNARY),
        io.grpc.CallOptions.DEFAULT.withDeadlineAfter(30, java.util.concurrent.TimeUnit.SECONDS), create);
  }

  /** Every method of the three services. */
  List<String> rpcs() {
    return methods.stream().map(m -> m.service().getName() + "/" + m.method().getName()).toList();
  }

  /** The next request. */
  Request next() {
    int k = random.nextInt(100);
    if (k < 30) {
      return extremes.get(random.nextInt(extremes.size())).get();
    }
    ServiceMethod m = methods.get(random.nextInt(methods.size()));
    byte[] valid = valid(m.method()).toByteArray();
    if (k < 45) {
      return request(m, Kind.RANDOM, "random bytes", randomBytes(random.nextInt(200)));
    }
    if (k < 60 && valid.length > 1) {
      return request(m, Kind.TRUNCATED, "cut at " + valid.length / 2, java.util.Arrays.copyOf(valid, valid.length / 2));
    }
    if (k < 85 && valid.length > 0) {
      byte[] flipped = valid.clone();
      for (int i = 0; i < 1 + random.nextInt(3); i++) {
        flipped[random.nextInt(flipped.length)] = (byte) random.nextInt(256);
      }
      return request(m, Kind.FLIPPED, "valid with bytes changed", flipped);
    }
    return request(m, Kind.VALID, "valid", valid);
  }

  private Request request(ServiceMethod m, Kind kind, String what, byte[] bytes) {
    return new Request(m.service().getFullName(), m.method(), kind, what, bytes);
  }

  private Request extreme(String rpc, String what, Message message) {
    return extreme(rpc, what, message.toByteArray());
  }

  private Request extreme(String rpc, String what, byte[] bytes) {
    for (ServiceMethod m : methods) {
      if ((m.service().getName() + "/" + m.method().getName()).equals(rpc)) {
        return request(m, Kind.EXTREME, what, bytes);
      }
    }
    throw new IllegalArgumentException("no method " + rpc);
  }

  private byte[] randomBytes(int n) {
    byte[] b = new byte[n];
    random.nextBytes(b);
    return b;
  }

  // ---- valid requests, to truncate and flip

  private Message valid(MethodDescriptor m) {
    String row = "row" + random.nextInt(50);
    return switch (m.getName()) {
      case "ReadRows" -> ReadRowsRequest.newBuilder().setTableName(TABLE).setRows(RowSet.newBuilder()
          .addRowKeys(bytes(row)).addRowRanges(RowRange.newBuilder().setStartKeyClosed(bytes("a"))
              .setEndKeyOpen(bytes("z")))).setFilter(RowFilter.newBuilder().setChain(RowFilter.Chain.newBuilder()
                  .addFilters(RowFilter.newBuilder().setFamilyNameRegexFilter(FAMILY))
                  .addFilters(RowFilter.newBuilder().setCellsPerColumnLimitFilter(1)))).setRowsLimit(10).build();
      case "SampleRowKeys" -> SampleRowKeysRequest.newBuilder().setTableName(TABLE).build();
      case "MutateRow" -> MutateRowRequest.newBuilder().setTableName(TABLE).setRowKey(bytes(row))
          .addMutations(set("q", "v")).build();
      case "MutateRows" -> MutateRowsRequest.newBuilder().setTableName(TABLE).addEntries(MutateRowsRequest.Entry
          .newBuilder().setRowKey(bytes(row)).addMutations(set("q", "v"))).build();
      case "CheckAndMutateRow" -> CheckAndMutateRowRequest.newBuilder().setTableName(TABLE).setRowKey(bytes(row))
          .setPredicateFilter(RowFilter.newBuilder().setValueRegexFilter(bytes("v.*")))
          .addTrueMutations(set("q", "yes")).addFalseMutations(set("q", "no")).build();
      case "ReadModifyWriteRow" -> ReadModifyWriteRowRequest.newBuilder().setTableName(TABLE).setRowKey(bytes(row))
          .addRules(ReadModifyWriteRule.newBuilder().setFamilyName(FAMILY).setColumnQualifier(bytes("n"))
              .setAppendValue(bytes("."))).build();
      case "PingAndWarm" -> PingAndWarmRequest.newBuilder().setName(INSTANCE).build();
      case "CreateTable" -> CreateTableRequest.newBuilder().setParent(INSTANCE).setTableId("x" + random.nextInt(5))
          .setTable(Table.newBuilder().putColumnFamilies(FAMILY, ColumnFamily.newBuilder().setGcRule(GcRule
              .newBuilder().setMaxNumVersions(2)).build())).build();
      case "GetTable" -> GetTableRequest.newBuilder().setName(TABLE).build();
      case "ModifyColumnFamilies" -> ModifyColumnFamiliesRequest.newBuilder().setName(TABLE).addModifications(
          ModifyColumnFamiliesRequest.Modification.newBuilder().setId("g" + random.nextInt(3))
              .setCreate(ColumnFamily.getDefaultInstance())).build();
      case "DropRowRange" -> DropRowRangeRequest.newBuilder().setName(TABLE).setRowKeyPrefix(bytes("nothing-" + row))
          .build();
      case "Locate" -> LocateRequest.newBuilder().setTableName(TABLE).setRowKey(bytes(row)).setPrefetch(2).build();
      // One of CreateTable's tables, never the probe's: no changed byte turns "x0" into "t".
      case "DeleteTable" -> DeleteTableRequest.newBuilder().setName(INSTANCE + "/tables/x" + random.nextInt(5))
          .build();
      // Every other method: its request message with a name field set where it has one.
      default -> namedDefault(m);
    };
  }

  /** The method's request message with its first string field set to the test table's name. */
  private static Message namedDefault(MethodDescriptor m) {
    DynamicMessage.Builder b = DynamicMessage.newBuilder(m.getInputType());
    m.getInputType().getFields().stream()
        .filter(f -> f.getType() == com.google.protobuf.Descriptors.FieldDescriptor.Type.STRING && !f.isRepeated())
        .findFirst().ifPresent(f -> b.setField(f, TABLE));
    return b.build();
  }

  // ---- extreme requests

  private void addExtremes() {
    extremes.add(() -> extreme("Bigtable/MutateRow", "table_name not UTF-8", withBadUtf8Name()));
    extremes.add(() -> extreme("Bigtable/ReadRows", "filter nested 150 deep", ReadRowsRequest.newBuilder()
        .setTableName(TABLE).setFilter(nested(150)).build()));
    extremes.add(() -> extreme("Bigtable/ReadRows", "filter nested 30 deep", ReadRowsRequest.newBuilder()
        .setTableName(TABLE).setFilter(nested(30)).build()));
    extremes.add(() -> extreme("Bigtable/CheckAndMutateRow", "predicate nested 150 deep", CheckAndMutateRowRequest
        .newBuilder().setTableName(TABLE).setRowKey(bytes("r")).setPredicateFilter(nested(150))
        .addTrueMutations(set("q", "v")).build()));
    extremes.add(() -> extreme("Bigtable/ReadRows", "chain of 5000 filters", ReadRowsRequest.newBuilder()
        .setTableName(TABLE).setFilter(wideChain(5000)).build()));
    for (String regex : List.of("((a{1000}){1000}){1000}", "(((((x{100}){100}){100}){100}){100})",
        "[\\x00-\\xff]{1000}[a-z]{1000}", "(" + "a|".repeat(3000) + "b){100}", "(".repeat(3000) + ")".repeat(3000),
        "([0-9a-fA-F\\pL\\pN]{1000}){500}", "(", "\\")) {
      extremes.add(() -> extreme("Bigtable/ReadRows", "row key regex " + show(regex), ReadRowsRequest.newBuilder()
          .setTableName(TABLE).setFilter(RowFilter.newBuilder().setRowKeyRegexFilter(bytes(regex))).build()));
      extremes.add(() -> extreme("Bigtable/ReadRows", "value regex in a chain " + show(regex), ReadRowsRequest
          .newBuilder().setTableName(TABLE).setFilter(RowFilter.newBuilder().setChain(RowFilter.Chain.newBuilder()
              .addFilters(RowFilter.newBuilder().setFamilyNameRegexFilter(FAMILY))
              .addFilters(RowFilter.newBuilder().setValueRegexFilter(bytes(regex))))).build()));
      extremes.add(() -> extreme("Bigtable/CheckAndMutateRow", "predicate regex " + show(regex),
          CheckAndMutateRowRequest.newBuilder().setTableName(TABLE).setRowKey(bytes("r"))
              .setPredicateFilter(RowFilter.newBuilder().setValueRegexFilter(bytes(regex)))
              .addTrueMutations(set("q", "v")).build()));
    }
    for (int size : new int[] {0, 4096, 64 * 1024, 64 * 1024 + 1, 1 << 20}) {
      extremes.add(() -> extreme("Bigtable/MutateRow", "row key of " + size + " bytes", MutateRowRequest
          .newBuilder().setTableName(TABLE).setRowKey(ByteString.copyFrom(randomBytes(size)))
          .addMutations(set("q", "v")).build()));
      extremes.add(() -> extreme("Bigtable/ReadRows", "row key of " + size + " bytes", ReadRowsRequest.newBuilder()
          .setTableName(TABLE).setRows(RowSet.newBuilder().addRowKeys(ByteString.copyFrom(randomBytes(size))))
          .build()));
    }
    extremes.add(() -> extreme("Bigtable/MutateRow", "value of 6 MiB", MutateRowRequest.newBuilder()
        .setTableName(TABLE).setRowKey(bytes("big")).addMutations(Mutation.newBuilder().setSetCell(
            Mutation.SetCell.newBuilder().setFamilyName(FAMILY).setColumnQualifier(bytes("q"))
                .setTimestampMicros(1000).setValue(ByteString.copyFrom(new byte[6 << 20])))).build()));
    extremes.add(() -> extreme("Bigtable/ReadRows", "100,001 row keys", ReadRowsRequest.newBuilder()
        .setTableName(TABLE).setRows(manyKeys(100_001)).build()));
    extremes.add(() -> extreme("Bigtable/ReadRows", "20,000 overlapping and reversed ranges", ReadRowsRequest
        .newBuilder().setTableName(TABLE).setRows(manyRanges(20_000)).setReversed(true).build()));
    extremes.add(() -> extreme("Bigtable/ReadRows", "a range starting after its end", ReadRowsRequest.newBuilder()
        .setTableName(TABLE).setRows(RowSet.newBuilder().addRowRanges(RowRange.newBuilder()
            .setStartKeyClosed(bytes("z")).setEndKeyOpen(bytes("a")))).build()));
    extremes.add(() -> extreme("Bigtable/ReadRows", "negative rows_limit", ReadRowsRequest.newBuilder()
        .setTableName(TABLE).setRowsLimit(-5).build()));
    extremes.add(() -> extreme("Bigtable/MutateRows", "no entries", MutateRowsRequest.newBuilder()
        .setTableName(TABLE).build()));
    extremes.add(() -> extreme("Bigtable/MutateRows", "100,001 entries", manyEntries(100_001, 1)));
    extremes.add(() -> extreme("Bigtable/MutateRows", "one entry of 100,001 mutations", manyEntries(1, 100_001)));
    extremes.add(() -> extreme("Bigtable/MutateRow", "100,001 mutations", MutateRowRequest.newBuilder()
        .setTableName(TABLE).setRowKey(bytes("r")).addAllMutations(java.util.Collections.nCopies(100_001,
            set("q", "v"))).build()));
    extremes.add(() -> extreme("Bigtable/ReadModifyWriteRow", "qualifier of 16 KiB + 1", ReadModifyWriteRowRequest
        .newBuilder().setTableName(TABLE).setRowKey(bytes("r")).addRules(ReadModifyWriteRule.newBuilder()
            .setFamilyName(FAMILY).setColumnQualifier(ByteString.copyFrom(new byte[16 * 1024 + 1]))
            .setIncrementAmount(1)).build()));
    extremes.add(() -> extreme("Bigtable/ReadModifyWriteRow", "family name of 65 bytes", ReadModifyWriteRowRequest
        .newBuilder().setTableName(TABLE).setRowKey(bytes("r")).addRules(ReadModifyWriteRule.newBuilder()
            .setFamilyName("f".repeat(65)).setColumnQualifier(bytes("q")).setAppendValue(bytes("x"))).build()));
    extremes.add(() -> extreme("Bigtable/ReadModifyWriteRow", "no rule kind", ReadModifyWriteRowRequest
        .newBuilder().setTableName(TABLE).setRowKey(bytes("r")).addRules(ReadModifyWriteRule.newBuilder()
            .setFamilyName(FAMILY).setColumnQualifier(bytes("q"))).build()));
    extremes.add(() -> extreme("Bigtable/CheckAndMutateRow", "both branches empty", CheckAndMutateRowRequest
        .newBuilder().setTableName(TABLE).setRowKey(bytes("r")).build()));
    extremes.add(() -> extreme("Bigtable/CheckAndMutateRow", "a branch of 100,001 mutations",
        CheckAndMutateRowRequest.newBuilder().setTableName(TABLE).setRowKey(bytes("r")).addAllTrueMutations(
            java.util.Collections.nCopies(100_001, set("q", "v"))).build()));
    extremes.add(() -> extreme("Bigtable/MutateRow", "negative and odd timestamps", MutateRowRequest.newBuilder()
        .setTableName(TABLE).setRowKey(bytes("r")).addMutations(Mutation.newBuilder().setSetCell(
            Mutation.SetCell.newBuilder().setFamilyName(FAMILY).setColumnQualifier(bytes("q"))
                .setTimestampMicros(-5).setValue(bytes("v")))).addMutations(Mutation.newBuilder()
            .setDeleteFromColumn(Mutation.DeleteFromColumn.newBuilder().setFamilyName(FAMILY)
                .setTimeRange(TimestampRange.newBuilder().setStartTimestampMicros(1001)))).build()));
    extremes.add(() -> extreme("Bigtable/MutateRow", "every mutation oneof unset", MutateRowRequest.newBuilder()
        .setTableName(TABLE).setRowKey(bytes("r")).addMutations(Mutation.getDefaultInstance()).build()));
    extremes.add(() -> extreme("Bigtable/MutateRow", "unknown fields", MutateRowRequest.newBuilder()
        .setTableName(TABLE).setRowKey(bytes("r")).addMutations(set("q", "v")).setUnknownFields(UnknownFieldSet
            .newBuilder().addField(999, UnknownFieldSet.Field.newBuilder().addVarint(7).build()).build()).build()));
    extremes.add(() -> extreme("Bigtable/ReadRows", "unknown fields in a filter", ReadRowsRequest.newBuilder()
        .setTableName(TABLE).setFilter(RowFilter.newBuilder().setPassAllFilter(true).setUnknownFields(UnknownFieldSet
            .newBuilder().addField(999, UnknownFieldSet.Field.newBuilder().addVarint(7).build()).build())).build()));
    extremes.add(() -> extreme("BigtableTableAdmin/CreateTable", "GC rule nested 120 deep", CreateTableRequest
        .newBuilder().setParent(INSTANCE).setTableId("deep").setTable(Table.newBuilder().putColumnFamilies(FAMILY,
            ColumnFamily.newBuilder().setGcRule(nestedGc(120)).build())).build()));
    extremes.add(() -> extreme("BigtableTableAdmin/CreateTable", "GC rule nested 45 deep", CreateTableRequest
        .newBuilder().setParent(INSTANCE).setTableId("deep2").setTable(Table.newBuilder().putColumnFamilies(FAMILY,
            ColumnFamily.newBuilder().setGcRule(nestedGc(45)).build())).build()));
    extremes.add(() -> extreme("BigtableTableAdmin/CreateTable", "a family name of 300 characters",
        CreateTableRequest.newBuilder().setParent(INSTANCE).setTableId("long").setTable(Table.newBuilder()
            .putColumnFamilies("g".repeat(300), ColumnFamily.getDefaultInstance())).build()));
    extremes.add(() -> extreme("BigtableTableAdmin/DropRowRange", "no target", DropRowRangeRequest.newBuilder()
        .setName(TABLE).build()));
    extremes.add(() -> extreme("Locations/Locate", "prefetch of a million", LocateRequest.newBuilder()
        .setTableName(TABLE).setPrefetch(1_000_000).build()));
    extremes.add(() -> extreme("Bigtable/PingAndWarm", "nothing at all", new byte[0]));
  }

  private static String show(String regex) {
    return regex.length() <= 40 ? regex : regex.substring(0, 37) + "...";
  }

  private static ByteString bytes(String s) {
    return ByteString.copyFromUtf8(s);
  }

  private static Mutation set(String qualifier, String value) {
    return Mutation.newBuilder().setSetCell(Mutation.SetCell.newBuilder().setFamilyName(FAMILY)
        .setColumnQualifier(bytes(qualifier)).setTimestampMicros(1000).setValue(bytes(value))).build();
  }

  private static RowFilter nested(int depth) {
    RowFilter f = RowFilter.newBuilder().setPassAllFilter(true).build();
    for (int i = 0; i < depth; i++) {
      f = RowFilter.newBuilder().setChain(RowFilter.Chain.newBuilder().addFilters(f)
          .addFilters(RowFilter.newBuilder().setPassAllFilter(true))).build();
    }
    return f;
  }

  private static RowFilter wideChain(int n) {
    RowFilter.Chain.Builder c = RowFilter.Chain.newBuilder();
    for (int i = 0; i < n; i++) {
      c.addFilters(RowFilter.newBuilder().setCellsPerColumnLimitFilter(i + 1));
    }
    return RowFilter.newBuilder().setChain(c).build();
  }

  private static GcRule nestedGc(int depth) {
    GcRule r = GcRule.newBuilder().setMaxNumVersions(1).build();
    for (int i = 0; i < depth; i++) {
      r = GcRule.newBuilder().setUnion(GcRule.Union.newBuilder().addRules(r)).build();
    }
    return r;
  }

  private static RowSet manyKeys(int n) {
    RowSet.Builder b = RowSet.newBuilder();
    for (int i = 0; i < n; i++) {
      b.addRowKeys(bytes("k" + i));
    }
    return b.build();
  }

  private RowSet manyRanges(int n) {
    RowSet.Builder b = RowSet.newBuilder();
    for (int i = 0; i < n; i++) {
      String a = "r" + random.nextInt(1000);
      String z = "r" + random.nextInt(1000);
      b.addRowRanges(RowRange.newBuilder().setStartKeyOpen(bytes(a.compareTo(z) <= 0 ? a : z))
          .setEndKeyClosed(bytes(a.compareTo(z) <= 0 ? z : a)));
    }
    return b.build();
  }

  private static MutateRowsRequest manyEntries(int entries, int mutationsEach) {
    MutateRowsRequest.Builder b = MutateRowsRequest.newBuilder().setTableName(TABLE);
    for (int i = 0; i < entries; i++) {
      b.addEntries(MutateRowsRequest.Entry.newBuilder().setRowKey(bytes("e" + i))
          .addAllMutations(java.util.Collections.nCopies(mutationsEach, set("q", "v"))));
    }
    return b.build();
  }

  /** A MutateRowRequest whose table_name (field 1, a string) holds bytes that are not UTF-8. */
  private static byte[] withBadUtf8Name() {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    CodedOutputStream out = CodedOutputStream.newInstance(bytes);
    try {
      out.writeByteArray(1, new byte[] {'p', '/', (byte) 0xc3, (byte) 0x28, (byte) 0xff});
      out.writeByteArray(2, "r".getBytes(java.nio.charset.StandardCharsets.UTF_8));
      out.writeMessage(3, set("q", "v"));
      out.flush();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return bytes.toByteArray();
  }
}
