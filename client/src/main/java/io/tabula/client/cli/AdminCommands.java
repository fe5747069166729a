package io.tabula.client.cli;

import io.tabula.client.GcPolicy;
import io.tabula.client.LocalityGroupDescription;
import io.tabula.client.TableDescription;
import io.tabula.client.TabulaClient;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;

/**
 * The table administration commands: createtable, deletetable, updatetable, ls, createfamily,
 * setgcpolicy, setlocalitygroup, localitygroups.
 */
final class AdminCommands {
  private AdminCommands() {}

  @Command(name = "createtable", mixinStandardHelpOptions = true,
      description = {"Creates a table, with column families if given.",
          "Each family may carry a GC policy after a colon, in the syntax of setgcpolicy (quote the argument "
              + "if the policy has spaces).",
          "Rows listed in splits= start tablets of their own at once (a cluster spreads them over its nodes).",
          "change-stream-retention-period= keeps the table's changes that long (1d to 7d; read them with watch).",
          "Examples:",
          "  tabula createtable webtable families=contents:maxversions=3,anchor splits=com.m,org.a",
          "  tabula createtable events families=f change-stream-retention-period=1d"})
  static final class CreateTable extends ClientCommand {
    /** As gcloud names it: how long the table keeps its change stream. */
    private static final String RETENTION = "change-stream-retention-period";

    @Parameters(index = "0", paramLabel = "TABLE", description = "The table id.")
    String table;

    @Parameters(index = "1..*", paramLabel = "families=F[:POLICY],... splits=ROW,... change-stream-retention-period=D",
        description = "The column families, comma-separated, each optionally family:gcpolicy; the split rows;"
            + " how long changes are kept (as 1d or 72h).")
    List<String> args = List.of();

    private final Map<String, GcPolicy> families = new LinkedHashMap<>();
    private final List<byte[]> splits = new java.util.ArrayList<>();
    private java.time.Duration retention = java.time.Duration.ZERO;

    @Override
    void check() {
      CbtArgs given = CbtArgs.parse(cmd(), args, Set.of("families", "splits", RETENTION), Set.of());
      if (given.has(RETENTION)) {
        retention = TimeArgs.duration(this, RETENTION, given.get(RETENTION));
      }
      String rows = given.get("splits");
      if (rows != null) {
        for (String r : rows.split(",", -1)) {
          if (r.isEmpty()) {
            throw usage("splits=" + rows + ": a split row is empty");
          }
          splits.add(r.getBytes(java.nio.charset.StandardCharsets.UTF_8));
        }
      }
      String spec = given.get("families");
      if (spec == null) {
        return;
      }
      for (String f : spec.split(",", -1)) {
        int colon = f.indexOf(':');
        String family = colon < 0 ? f : f.substring(0, colon);
        if (family.isEmpty()) {
          throw usage("families=" + spec + ": a family name is empty");
        }
        GcPolicy policy = colon < 0 ? GcPolicy.never() : policy(family, f.substring(colon + 1));
        if (families.put(family, policy) != null) {
          throw usage("families=" + spec + ": family '" + family + "' is given twice");
        }
      }
    }

    private GcPolicy policy(String family, String text) {
      try {
        return GcPolicy.parse(text);
      } catch (IllegalArgumentException e) {
        throw usage("family " + family + ": " + e.getMessage());
      }
    }

    @Override
    int run(TabulaClient client) {
      Blocking.join(client.admin().createTable(table, families, splits, retention));
      return 0;
    }
  }

  @Command(name = "deletetable", mixinStandardHelpOptions = true,
      description = "Deletes a table and every row in it.")
  static final class DeleteTable extends ClientCommand {
    @Parameters(index = "0", paramLabel = "TABLE", description = "The table id.")
    String table;

    @Override
    int run(TabulaClient client) {
      Blocking.join(client.admin().deleteTable(table));
      return 0;
    }
  }

  @Command(name = "updatetable", mixinStandardHelpOptions = true,
      description = {"Changes a table's settings: deletion protection, as cbt's updatetable does.",
          "While deletion protection is enabled, deleting the table or one of its families is refused.",
          "Without a setting, prints the table's. Examples:",
          "  tabula updatetable webtable deletion-protection=enabled",
          "  tabula updatetable webtable --deletion-protection=false"})
  static final class UpdateTable extends ClientCommand {
    @Parameters(index = "0", paramLabel = "TABLE", description = "The table id.")
    String table;

    @Parameters(index = "1..*", paramLabel = "deletion-protection=enabled|disabled",
        description = "The setting to change, as cbt writes it.")
    List<String> args = List.of();

    @picocli.CommandLine.Option(names = "--deletion-protection", arity = "0..1", fallbackValue = "true",
        paramLabel = "true|false", description = "Deletion protection on (the default when given alone) or off.")
    Boolean option;

    private Boolean protection;

    @Override
    void check() {
      String given = CbtArgs.parse(cmd(), args, Set.of("deletion-protection"), Set.of()).get("deletion-protection");
      if (given != null && option != null) {
        throw usage("give deletion protection once: deletion-protection=" + given + " or --deletion-protection");
      }
      if (given != null) {
        protection = switch (given) {
          case "enabled" -> true;
          case "disabled" -> false;
          default -> throw usage("deletion-protection=" + given + ": must be enabled or disabled");
        };
      } else {
        protection = option;
      }
    }

    @Override
    int run(TabulaClient client) {
      if (protection != null) {
        Blocking.join(client.admin().setDeletionProtection(table, protection));
      }
      out().println("deletion-protection=" + (Blocking.join(client.admin().deletionProtection(table)) ? "enabled"
          : "disabled"));
      return 0;
    }
  }

  @Command(name = "ls", mixinStandardHelpOptions = true,
      description = {"Lists the tables, or a table's column families and their GC policies.",
          "Without a table, prints one table id per line."})
  static final class Ls extends ClientCommand {
    @Parameters(index = "0", arity = "0..1", paramLabel = "TABLE", description = "The table to describe.")
    String table;

    @Override
    int run(TabulaClient client) {
      if (table == null) {
        Blocking.join(client.admin().listTables()).forEach(out()::println);
        return 0;
      }
      TableDescription d = Blocking.join(client.admin().describe(table));
      TextTable.print(out(), List.of("Family Name", "GC Policy"), d.families().entrySet().stream()
          .map(e -> List.of(e.getKey(), e.getValue().toString())).toList());
      return 0;
    }
  }

  @Command(name = "createfamily", mixinStandardHelpOptions = true,
      description = {"Adds a column family that keeps every version (see setgcpolicy).",
          "As cbt's, FAMILY:TYPE makes an aggregate family, whose cells fold what is added to them: intsum, "
              + "intmin, intmax or inthll (HyperLogLog++ unique count). Example:",
          "  tabula createfamily counters visits:intsum"})
  static final class CreateFamily extends ClientCommand {
    @Parameters(index = "0", paramLabel = "TABLE", description = "The table id.")
    String table;

    @Parameters(index = "1", paramLabel = "FAMILY[:TYPE]", description = "The new family, and its aggregate type.")
    String family;

    private String name;
    private io.tabula.client.Aggregate aggregate;

    @Override
    void check() {
      int colon = family.indexOf(':');
      name = colon < 0 ? family : family.substring(0, colon);
      if (colon >= 0) {
        aggregate = switch (family.substring(colon + 1)) {
          case "intsum" -> io.tabula.client.Aggregate.SUM;
          case "intmin" -> io.tabula.client.Aggregate.MIN;
          case "intmax" -> io.tabula.client.Aggregate.MAX;
          case "inthll" -> io.tabula.client.Aggregate.HLL;
          default -> throw usage(family + ": the type after ':' is intsum, intmin, intmax or inthll");
        };
      }
    }

    @Override
    int run(TabulaClient client) {
      Blocking.join(aggregate == null ? client.admin().createFamily(table, name, GcPolicy.never())
          : client.admin().createFamily(table, name, GcPolicy.never(), aggregate));
      return 0;
    }
  }

  @Command(name = "setgcpolicy", mixinStandardHelpOptions = true,
      description = {"Sets the garbage-collection policy of a column family.",
          "The policy is in cbt's syntax: never, maxversions=N or maxage=N followed by ms, s, m, h or d, "
              + "combined with 'or' (drop what any rule drops), 'and' (drop what every rule drops) and "
              + "parentheses. Example:",
          "  tabula setgcpolicy webtable anchor \"maxage=7d or maxversions=2\""})
  static final class SetGcPolicy extends ClientCommand {
    @Parameters(index = "0", paramLabel = "TABLE", description = "The table id.")
    String table;

    @Parameters(index = "1", paramLabel = "FAMILY", description = "The column family.")
    String family;

    @Parameters(index = "2..*", arity = "1..*", paramLabel = "POLICY",
        description = "The policy; its words may be given as one argument or several.")
    List<String> words;

    private GcPolicy policy;

    @Override
    void check() {
      try {
        policy = GcPolicy.parse(String.join(" ", words));
      } catch (IllegalArgumentException e) {
        throw usage(e.getMessage());
      }
    }

    @Override
    int run(TabulaClient client) {
      Blocking.join(client.admin().setGcPolicy(table, family, policy));
      return 0;
    }
  }

  @Command(name = "setlocalitygroup", mixinStandardHelpOptions = true,
      description = {"Creates or changes a locality group of a table, and creates column families in it.",
          "Families in one locality group are stored in SSTables of their own (a read of them reads no other "
              + "group's files); a group held in memory is read whole into the serving node's memory, so reads of "
              + "its families never touch the disk. Every family is in the group 'default' unless it was created "
              + "in another; a family's group is set when the family is created. Settings not given are kept. "
              + "Example:",
          "  tabula setlocalitygroup webtable lang inmemory=true compression=lz4 families=language,langid"})
  static final class SetLocalityGroup extends ClientCommand {
    @Parameters(index = "0", paramLabel = "TABLE", description = "The table id.")
    String table;

    @Parameters(index = "1", paramLabel = "GROUP", description = "The locality group ('default' for the default).")
    String group;

    @Parameters(index = "2..*", paramLabel = "inmemory=true|false compression=none|lz4|zstd families=F,...",
        description = "Whether the group is held in memory; how its new blocks are compressed; families to create "
            + "in it.")
    List<String> args = List.of();

    private Boolean inMemory;
    private LocalityGroupDescription.Compression compression;
    private final List<String> families = new java.util.ArrayList<>();

    @Override
    void check() {
      CbtArgs given = CbtArgs.parse(cmd(), args, Set.of("inmemory", "compression", "families"), Set.of());
      String mem = given.get("inmemory");
      if (mem != null) {
        if (!mem.equals("true") && !mem.equals("false")) {
          throw usage("inmemory=" + mem + ": must be true or false");
        }
        inMemory = Boolean.valueOf(mem);
      }
      String c = given.get("compression");
      if (c != null) {
        try {
          compression = LocalityGroupDescription.Compression.valueOf(c.toUpperCase(java.util.Locale.ROOT));
        } catch (IllegalArgumentException e) {
          throw usage("compression=" + c + ": must be none, lz4 or zstd");
        }
      }
      String fs = given.get("families");
      if (fs != null) {
        for (String f : fs.split(",", -1)) {
          if (f.isEmpty()) {
            throw usage("families=" + fs + ": a family name is empty");
          }
          families.add(f);
        }
      }
    }

    @Override
    int run(TabulaClient client) {
      LocalityGroups.print(out(), Blocking.join(client.admin().setLocalityGroup(table, group, inMemory, compression,
          families)));
      return 0;
    }
  }

  @Command(name = "localitygroups", mixinStandardHelpOptions = true,
      description = "Lists a table's locality groups: whether each is held in memory, its compression, its families.")
  static final class LocalityGroups extends ClientCommand {
    @Parameters(index = "0", paramLabel = "TABLE", description = "The table id.")
    String table;

    @Override
    int run(TabulaClient client) {
      print(out(), Blocking.join(client.admin().localityGroups(table)));
      return 0;
    }

    static void print(java.io.PrintWriter out, List<LocalityGroupDescription> groups) {
      TextTable.print(out, List.of("Group", "In memory", "Compression", "Families"), groups.stream()
          .map(g -> List.of(g.name(), g.inMemory() ? "yes" : "no", g.compression().name().toLowerCase(
              java.util.Locale.ROOT), String.join(",", g.families()))).toList());
    }
  }
}
