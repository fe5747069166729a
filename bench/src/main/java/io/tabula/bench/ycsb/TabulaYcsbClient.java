package io.tabula.bench.ycsb;

import io.tabula.client.Row;
import io.tabula.client.RowMutation;
import io.tabula.client.TabulaClient;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.Vector;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import site.ycsb.ByteIterator;
import site.ycsb.DB;
import site.ycsb.DBException;
import site.ycsb.Status;

/**
 * A YCSB binding for the Tabula Java client ({@code -db io.tabula.bench.ycsb.TabulaYcsbClient}).
 * Records map to rows as {@link YcsbFields} says: read is {@code readRow} with a column
 * filter, scan a key range from the start key with a row limit, insert and update one
 * atomic {@code apply} of the fields, delete a row deletion.
 *
 * <p>Properties: {@code tabula.endpoint} (host:port, default 127.0.0.1:8086),
 * {@code tabula.table} (replaces YCSB's table name when set), {@code tabula.family}
 * (default {@value #DEFAULT_FAMILY}), {@code tabula.timeout-ms} (per operation, default
 * 10000). YCSB makes one instance per client thread; they share one {@link TabulaClient},
 * closed by the last {@link #cleanup}.
 */
public final class TabulaYcsbClient extends DB {
  static final String DEFAULT_FAMILY = "cf";
  private static final int ERRORS_PRINTED = 10;
  private static final AtomicInteger ERRORS = new AtomicInteger();
  private static final Object LOCK = new Object();
  private static TabulaClient shared;
  private static int users;

  private TabulaClient client;
  private String tableOverride;
  private String family;
  private long timeoutMs;

  @Override
  public void init() throws DBException {
    Properties p = getProperties();
    String endpoint = p.getProperty("tabula.endpoint", TabulaClient.DEFAULT_ENDPOINT);
    tableOverride = p.getProperty("tabula.table");
    family = p.getProperty("tabula.family", DEFAULT_FAMILY);
    try {
      timeoutMs = Long.parseLong(p.getProperty("tabula.timeout-ms", "10000"));
    } catch (NumberFormatException e) {
      throw new DBException("tabula.timeout-ms must be a number of milliseconds: " + e.getMessage());
    }
    synchronized (LOCK) {
      if (shared == null) {
        try {
          shared = TabulaClient.builder().endpoint(endpoint).deadline(Duration.ofMillis(timeoutMs)).build();
        } catch (IllegalArgumentException e) {
          throw new DBException("tabula.endpoint: " + e.getMessage());
        }
      }
      users++;
      client = shared;
    }
  }

  @Override
  public void cleanup() {
    synchronized (LOCK) {
      if (--users == 0) {
        shared.close();
        shared = null;
      }
    }
  }

  private String table(String ycsbTable) {
    return tableOverride != null ? tableOverride : ycsbTable;
  }

  @Override
  public Status read(String table, String key, Set<String> fields, Map<String, ByteIterator> result) {
    try {
      Optional<Row> row = await(client.readRow(table(table), com.google.protobuf.ByteString.copyFromUtf8(key),
          YcsbFields.filter(family, fields)));
      if (row.isEmpty()) {
        return Status.NOT_FOUND;
      }
      YcsbFields.toResult(row.get(), family, result);
      return Status.OK;
    } catch (Failure e) {
      return error("read " + key, e);
    }
  }

  @Override
  public Status scan(String table, String startKey, int count, Set<String> fields,
      Vector<HashMap<String, ByteIterator>> result) {
    try {
      List<Row> rows = await(client.readRows(YcsbFields.scan(table(table), family, startKey, count, fields)));
      for (Row r : rows) {
        HashMap<String, ByteIterator> values = new HashMap<>();
        YcsbFields.toResult(r, family, values);
        result.add(values);
      }
      return Status.OK;
    } catch (Failure e) {
      return error("scan from " + startKey, e);
    }
  }

  @Override
  public Status update(String table, String key, Map<String, ByteIterator> values) {
    return write(table, "update " + key, YcsbFields.mutation(key, family, values));
  }

  @Override
  public Status insert(String table, String key, Map<String, ByteIterator> values) {
    return write(table, "insert " + key, YcsbFields.mutation(key, family, values));
  }

  @Override
  public Status delete(String table, String key) {
    return write(table, "delete " + key, RowMutation.create(key).deleteRow());
  }

  private Status write(String table, String what, RowMutation m) {
    try {
      await(client.apply(table(table), m));
      return Status.OK;
    } catch (Failure e) {
      return error(what, e);
    }
  }

  private <T> T await(CompletionStage<T> stage) throws Failure {
    try {
      return stage.toCompletableFuture().get(timeoutMs, TimeUnit.MILLISECONDS);
    } catch (ExecutionException e) {
      throw new Failure(e.getCause() == null ? e : e.getCause());
    } catch (TimeoutException e) {
      throw new Failure(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new Failure(e);
    }
  }

  private static Status error(String what, Failure e) {
    if (ERRORS.incrementAndGet() <= ERRORS_PRINTED) {
      System.err.println("tabula: " + what + " failed: " + e.getCause());
    }
    return Status.ERROR;
  }

  /** An operation that failed, timed out or was interrupted; its cause says which. */
  private static final class Failure extends Exception {
    private static final long serialVersionUID = 1L;

    Failure(Throwable cause) {
      super(cause);
    }
  }
}
