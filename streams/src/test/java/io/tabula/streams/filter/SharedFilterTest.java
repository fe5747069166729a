package io.tabula.streams.filter;

import static io.tabula.streams.filter.Fixtures.*;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.tabula.persistence.model.Row;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;

/** One compiled filter shared by several threads gives every thread the same answers. */
class SharedFilterTest {
  @Test
  void concurrentEvaluationsDoNotShareState() throws InterruptedException, ExecutionException {
    CompiledFilter f = RowFilters.compile(chain(
        interleave(chain(family("f1"), columnLimit(1), label("new")), chain(qualifier("c"), sink())),
        rowOffset(1)));
    Row row = sample();
    String expected = "f1:b@20=x[new] f2:c@7=";
    assertEquals(expected, render(f.apply(row)));
    ExecutorService pool = Executors.newFixedThreadPool(4);
    try {
      List<Future<Boolean>> results = new ArrayList<>();
      for (int t = 0; t < 8; t++) {
        results.add(pool.submit(() -> {
          for (int i = 0; i < 2_000; i++) {
            if (!expected.equals(render(f.apply(row)))) {
              return false;
            }
          }
          return true;
        }));
      }
      for (Future<Boolean> r : results) {
        assertEquals(true, r.get());
      }
    } finally {
      pool.shutdownNow();
    }
  }
}
