package io.tabula.cluster.conformance;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What the harness reads of a Tabula cluster through the Management HTTP of the node the
 * clients call: its {@code base} URI (http or https), a {@code client} (trusting the cluster's
 * CA for https), and the {@code authorization} header its requests carry (null: none). A
 * request that is not answered 200 within {@link ConformancePeer#CALL_DEADLINE} fails with an
 * {@link IOException} holding the answer. Immutable.
 */
record ManagementView(URI base, HttpClient client, String authorization) {
  private static final Pattern OWNER = Pattern.compile("\"owner\":\"([^\"]*)\"");

  /** How many tablets each node owns ({@code GET /tabula/tablets}, answered by the master's node). */
  Map<String, Integer> tabletsByOwner() throws IOException, InterruptedException {
    Map<String, Integer> owners = new TreeMap<>();
    Matcher m = OWNER.matcher(get("/tabula/tablets"));
    while (m.find()) {
      owners.merge(m.group(1), 1, Integer::sum);
    }
    return owners;
  }

  /** The nodes owning a tablet of {@code table}. */
  java.util.Set<String> ownersOf(String table) throws IOException, InterruptedException {
    java.util.Set<String> owners = new java.util.TreeSet<>();
    Matcher m = OWNER.matcher(tabletsOf(table));
    while (m.find()) {
      owners.add(m.group(1));
    }
    return owners;
  }

  /** The tablets of {@code table} (owner, state, a move's other node), one JSON object each. */
  String tabletsOf(String table) throws IOException, InterruptedException {
    return get("/tabula/tablets?table=" + table);
  }

  private String get(String path) throws IOException, InterruptedException {
    HttpRequest.Builder get = HttpRequest.newBuilder(base.resolve(path)).timeout(ConformancePeer.CALL_DEADLINE);
    if (authorization != null) {
      get.header("Authorization", authorization);
    }
    HttpResponse<String> r = client.send(get.build(), HttpResponse.BodyHandlers.ofString());
    if (r.statusCode() != 200) {
      throw new IOException("GET " + path + " answered " + r.statusCode() + ": " + r.body());
    }
    return r.body();
  }
}
