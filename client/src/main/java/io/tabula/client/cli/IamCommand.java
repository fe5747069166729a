package io.tabula.client.cli;

import io.tabula.client.TablePolicy;
import io.tabula.client.TabulaClient;
import java.io.PrintWriter;
import java.util.List;
import java.util.Map;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;

/**
 * {@code iam get TABLE}, {@code iam grant TABLE ROLE MEMBER}, {@code iam revoke TABLE ROLE
 * MEMBER}: a table's IAM policy, shown or changed one binding at a time (read, changed, written
 * back against its etag; read again if someone changed it meanwhile). A role is a Cloud
 * Bigtable one ({@code reader}, {@code user}, {@code viewer}, {@code admin}, or its full
 * {@code roles/...} name); a member is {@code user:EMAIL}, {@code serviceAccount:EMAIL},
 * {@code cert:SUBJECT} or {@code allAuthenticatedUsers}.
 */
@Command(name = "iam", mixinStandardHelpOptions = true,
    description = {"Shows or changes a table's IAM policy (docs/security.md).",
        "  tabula iam get webtable",
        "  tabula iam grant webtable reader user:ana@example.com",
        "  tabula iam revoke webtable reader user:ana@example.com"})
final class IamCommand extends ClientCommand {
  @Parameters(index = "0", paramLabel = "get|grant|revoke", description = "What to do.")
  String action;

  @Parameters(index = "1", paramLabel = "TABLE", description = "The table id.")
  String table;

  @Parameters(index = "2..*", paramLabel = "ROLE MEMBER", description = "For grant and revoke: the role and the member.")
  List<String> binding = List.of();

  @Override
  void check() {
    boolean change = action.equals("grant") || action.equals("revoke");
    if (!change && !action.equals("get")) {
      throw usage("'" + action + "' is not an iam action: get, grant or revoke");
    }
    if (change && binding.size() != 2) {
      throw usage("iam " + action + " takes TABLE ROLE MEMBER");
    }
    if (!change && !binding.isEmpty()) {
      throw usage("iam get takes only TABLE");
    }
  }

  @Override
  int run(TabulaClient client) {
    TablePolicy p = Blocking.join(switch (action) {
      case "grant" -> client.admin().grant(table, binding.get(0), binding.get(1));
      case "revoke" -> client.admin().revoke(table, binding.get(0), binding.get(1));
      default -> client.admin().policy(table);
    });
    PrintWriter out = out();
    if (p.bindings().isEmpty()) {
      out.println("(no bindings)");
    }
    for (Map.Entry<String, List<String>> b : p.bindings().entrySet()) {
      out.println(b.getKey() + ": " + String.join(", ", b.getValue()));
    }
    return 0;
  }
}
