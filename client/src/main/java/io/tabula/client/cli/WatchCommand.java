package io.tabula.client.cli;

import com.google.protobuf.ByteString;
import io.tabula.client.Change;
import io.tabula.client.TabulaClient;
import java.io.IOException;
import java.time.Instant;
import java.util.concurrent.Flow;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code tabula watch}: a table's change stream, printed as the changes are committed, one line
 * per mutation: the row key, the commit time (UTC, as {@code read} prints times), and what
 * changed, values quoted as {@code read} quotes them. A key or qualifier that is not plain text
 * (not UTF-8, or holding spaces, quotes or control characters) is quoted too, so that each line
 * reads one way. Runs until interrupted, until {@code --until}, or for {@code --count} changes.
 */
@Command(name = "watch", mixinStandardHelpOptions = true,
    description = {"Prints a table's changes as they are committed, one line per mutation, until interrupted "
        + "(Ctrl-C).",
        "The table must keep a change stream (createtable ... change-stream-retention-period=1d).",
        "Each line is the row key, the commit time (UTC) and what changed:",
        "  r1  2024/05/01-12:00:00.000123  set f:q @ 2024/05/01-12:00:00.000000 = \"CNN\"",
        "  r1  2024/05/01-12:00:01.000456  delete f:q",
        "  \"r 2\"  2024/05/01-12:00:02.000789  delete family f",
        "A key or qualifier that is not plain text (spaces, quotes, other bytes) is quoted as values are.",
        "A row delete shows as a family delete per family; an aggregate write as 'merge f:q @ TIME input \"...\"'.",
        "TIME is RFC 3339 (2024-05-01T12:00:00Z), now, or a duration before now (-30s, -5m, -2h, -1d).",
        "Example:",
        "  tabula watch webtable --from -10m"})
final class WatchCommand extends ClientCommand {
  @Parameters(index = "0", paramLabel = "TABLE", description = "The table id.")
  String table;

  @Option(names = "--from", paramLabel = "TIME", description = "Print changes committed from TIME on (default: now).")
  String fromText;

  @Option(names = "--until", paramLabel = "TIME",
      description = "Stop once every change committed before TIME is printed.")
  String untilText;

  @Option(names = "--count", paramLabel = "N", description = "Stop after N changes.")
  Long count;

  private Instant from;
  private Instant until;

  @Override
  void check() {
    Instant now = Instant.now();
    from = fromText == null ? now : TimeArgs.time(this, "--from", fromText, now);
    until = untilText == null ? null : TimeArgs.time(this, "--until", untilText, now);
    if (until != null && !until.isAfter(from)) {
      throw usage("--until " + untilText + " must be after --from (" + from + ")");
    }
    if (count != null && count < 1) {
      throw usage("--count must be at least 1, was " + count);
    }
  }

  @Override
  int run(TabulaClient client) throws IOException {
    Flow.Publisher<Change> changes = until == null ? client.readChangeStream(table, from)
        : client.readChangeStream(table, from, until);
    Blocking.forEach(changes, count == null ? Long.MAX_VALUE : count, c -> {
      print(c);
      out().flush();
    });
    return 0;
  }

  private void print(Change c) {
    String head = word(c.key()) + "  " + RowPrinter.time(c.commitMicros()) + "  ";
    for (Change.Mutation m : c.mutations()) {
      out().println(head + what(m));
    }
  }

  /** One mutation, as a line shows it after the key and the commit time. */
  static String what(Change.Mutation m) {
    if (m instanceof Change.SetCell s) {
      return "set " + s.family() + ":" + word(s.qualifier()) + " @ " + RowPrinter.time(s.timestampMicros()) + " = "
          + RowPrinter.quote(s.value());
    }
    if (m instanceof Change.DeleteCells d) {
      return "delete " + d.family() + ":" + word(d.qualifier()) + versions(d);
    }
    if (m instanceof Change.MergeToCell mc) {
      return "merge " + mc.family() + ":" + word(mc.qualifier()) + " @ " + RowPrinter.time(mc.timestampMicros())
          + " input " + RowPrinter.quote(mc.input());
    }
    return "delete family " + m.family();
  }

  private static String versions(Change.DeleteCells d) {
    if (d.fromMicros() == 0 && d.toMicros() == 0) {
      return "";
    }
    return " versions [" + RowPrinter.time(d.fromMicros()) + ", "
        + (d.toMicros() == 0 ? "newest]" : RowPrinter.time(d.toMicros()) + ")");
  }

  /** The bytes as they are if they are plain text (UTF-8 with no space, quote or control character), else quoted. */
  static String word(ByteString b) {
    String quoted = RowPrinter.quote(b);
    String inner = quoted.substring(1, quoted.length() - 1);
    boolean plain = !b.isEmpty() && inner.equals(b.toStringUtf8()) && inner.codePoints().noneMatch(
        cp -> Character.isWhitespace(cp) || Character.isSpaceChar(cp));
    return plain ? inner : quoted;
  }
}
