package io.tabula.bench.ycsb;

import io.tabula.client.GcPolicy;
import io.tabula.client.TabulaClient;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Creates the table a YCSB run uses, with one family keeping one version:
 * {@code CreateYcsbTable ENDPOINT TABLE FAMILY}. Exits 0 once the table exists.
 */
public final class CreateYcsbTable {
  private CreateYcsbTable() {
  }

  public static void main(String[] args) throws Exception {
    if (args.length != 3) {
      System.err.println("usage: CreateYcsbTable ENDPOINT TABLE FAMILY");
      System.exit(2);
    }
    try (TabulaClient client = TabulaClient.connect(args[0])) {
      client.admin().createTable(args[1], Map.of(args[2], GcPolicy.maxVersions(1))).toCompletableFuture()
          .get(60, TimeUnit.SECONDS);
    }
    System.out.println("created table " + args[1] + " with family " + args[2] + " (maxversions=1) on " + args[0]);
  }
}
