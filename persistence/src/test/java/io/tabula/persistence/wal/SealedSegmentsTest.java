package io.tabula.persistence.wal;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/** The sealed-segment ledger's choices: unknown summaries wait for replay, blanks go first, nothing goes twice. */
class SealedSegmentsTest {
  @Test
  void onlySegmentsWhoseRecordsAreAllDurableElsewhereAreTakenAndEachOnce() {
    SealedSegments ledger = new SealedSegments(List.of("d/000001.log"));
    ledger.sealed("d/000002.log", Map.of("a", 10L, "b", 5L));
    ledger.sealed("d/000003.log", Map.of("a", 20L));
    ledger.leftBlank("d/000004.log");
    assertEquals(List.of("d/000001.log", "d/000002.log", "d/000003.log", "d/000004.log"), ledger.paths());

    assertEquals(List.of("d/000002.log", "d/000004.log"), ledger.takeObsolete(t -> 10),
        "not the old segment replay has not read, nor the one with a to 20");
    assertEquals(List.of(), ledger.takeObsolete(t -> 10), "taken once");
    ledger.sealed("d/000001.log", Map.of("c", 1L)); // replay read it
    assertEquals(List.of("d/000001.log", "d/000003.log"), ledger.takeObsolete(t -> Long.MAX_VALUE));
    assertEquals(List.of(), ledger.paths());
  }

  @Test
  void concurrentChoosersNeverTakeOneSegmentTwice() {
    SealedSegments ledger = new SealedSegments(List.of());
    for (int i = 0; i < 2000; i++) {
      ledger.sealed(String.format("d/%06d.log", i), Map.of("t", (long) i));
    }
    List<String> taken = Collections.synchronizedList(new ArrayList<>());
    List<CompletableFuture<Void>> choosers = new ArrayList<>();
    for (int c = 0; c < 4; c++) {
      choosers.add(CompletableFuture.runAsync(() -> {
        for (long upTo = 0; upTo < 2050; upTo += 50) { // the last bound, 2000, takes every segment
          long bound = upTo;
          taken.addAll(ledger.takeObsolete(t -> bound));
        }
      }));
    }
    choosers.forEach(CompletableFuture::join);
    assertEquals(2000, taken.size());
    assertEquals(2000, taken.stream().distinct().count());
  }
}
