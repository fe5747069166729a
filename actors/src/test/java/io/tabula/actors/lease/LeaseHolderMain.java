package io.tabula.actors.lease;

import java.io.IOException;
import java.nio.file.Path;
import java.util.concurrent.ExecutionException;

/**
 * A separate process that takes a {@link FileLease} and keeps it until it is killed or its
 * standard input closes. Prints {@code ACQUIRED} or {@code NOT-ACQUIRED} as its first line,
 * and {@code LOST} and the reason when it finds the lease lost.
 *
 * <p>Arguments: lease directory, lease name, owner name.
 */
public final class LeaseHolderMain {
  private LeaseHolderMain() {}

  public static void main(String[] args)
      throws IOException, InterruptedException, ExecutionException {
    FileLease lease = new FileLease(FileLeaseTest.settings(Path.of(args[0]), args[1], args[2]));
    boolean acquired = lease.acquire(reason -> {
      System.out.println("LOST " + reason.map(Throwable::getMessage).orElse(""));
      System.out.flush();
    }).toCompletableFuture().get();
    System.out.println(acquired ? "ACQUIRED" : "NOT-ACQUIRED");
    System.out.flush();
    while (System.in.read() != -1) {
      // hold until the parent closes our input or kills us
    }
  }
}
