package io.tabula.streams.filter;

import static io.tabula.streams.filter.Fixtures.*;
import static org.junit.jupiter.api.Assertions.assertEquals;

import com.google.bigtable.v2.RowFilter;
import io.tabula.persistence.model.Row;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Chains, interleaves, conditions, sinks and labels, alone and nested. */
class CompositeFiltersTest {
  @Test
  void chainNarrowsInOrder() {
    assertEquals("f1:a@30=v1 f1:a@20=v2", run(chain(family("f1"), qualifier("a"), columnLimit(2))));
    // order matters: limit first, then the qualifier filter
    assertEquals("f1:a@30=v1", run(chain(rowLimit(1), qualifier("a"))));
    assertEquals("f1:b@20=x", run(chain(qualifier("b"), rowLimit(1))));
  }

  @Test
  void interleaveKeepsDuplicatesAndRestoresRowOrder() {
    assertEquals("f1:a@30=v1 f1:a@30=v1 f1:a@20=v2 f2:c@7=",
        run(interleave(qualifier("c"), chain(family("f1"), qualifier("a"), columnLimit(2)), rowLimit(1))));
  }

  @Test
  void interleaveOfTwoPassAllsDoublesEveryCell() {
    assertEquals("f2:a@5=y f2:a@5=y f2:c@7= f2:c@7=", run(chain(family("f2"), interleave(passAll(), passAll()))));
  }

  @Test
  void rowCountersCountEachDuplicateCopy() {
    RowFilter doubled = interleave(passAll(), passAll());
    assertEquals("f1:a@30=v1 f1:a@30=v1 f1:a@20=v2", run(chain(doubled, rowLimit(3))));
    assertEquals("f2:c@7= f2:c@7=", run(chain(doubled, rowOffset(10))));
    assertEquals("f1:a@30=v1 f1:a@30=v1 f1:b@20=x f1:b@20=x f2:a@5=y f2:a@5=y f2:c@7= f2:c@7=",
        run(chain(doubled, columnLimit(2))));
  }

  @Test
  void interleaveLabelsEachBranchCopySeparately() {
    assertEquals("f2:a@5=y[left] f2:a@5=y[right] f2:c@7=[left]",
        run(chain(family("f2"), interleave(label("left"), chain(qualifier("a"), label("right"))))));
  }

  @Test
  void conditionChoosesBranchByWhetherPredicateOutputsAnything() {
    RowFilter pick = condition(qualifier("b"), family("f2"), family("f1"));
    assertEquals("f2:a@5=y f2:c@7=", run(pick));
    RowFilter other = condition(qualifier("zzz"), family("f2"), family("f1"));
    assertEquals("f1:a@30=v1 f1:a@20=v2 f1:a@10=v3 f1:b@20=x", run(other));
  }

  @Test
  void conditionWithMissingBranchOutputsNothing() {
    assertEquals("", run(condition(qualifier("b"), null, passAll())));
    assertEquals("", run(condition(qualifier("zzz"), passAll(), null)));
  }

  @Test
  void predicateLabelsDoNotLeak() {
    assertEquals("f1:b@20=x", run(condition(chain(qualifier("b"), label("pred")), qualifier("b"), null)));
  }

  @Test
  void predicateSeesTheConditionInputNotTheRow() {
    // inside the chain, the predicate only sees f2 cells, so qualifier b is absent
    assertEquals("f2:a@5=y", run(chain(family("f2"), condition(qualifier("b"), blockAll(), qualifier("a")))));
  }

  @Test
  void chainInInterleaveInCondition() {
    RowFilter inner = interleave(
        chain(family("f1"), columnLimit(1), label("newest")),
        chain(family("f2"), strip()));
    RowFilter f = condition(rowKey("row.*"), inner, blockAll());
    assertEquals("f1:a@30=v1[newest] f1:b@20=x[newest] f2:a@5= f2:c@7=", run(f));
    Row other = new Row(b("other"), sample().cells());
    assertEquals("", run(f, other));
  }

  @Test
  void sinkAtTopLevelReturnsTheWholeRow() {
    assertEquals(run(passAll()), run(sink()));
  }

  @Test
  void sinkInChainBypassesTheRestOfTheChain() {
    assertEquals("f1:b@20=x[seen]", run(chain(qualifier("b"), label("seen"), sink(), blockAll())));
    // filters after the sink see nothing, so they add nothing
    assertEquals("f1:b@20=x", run(chain(qualifier("b"), sink(), interleave(passAll(), passAll()))));
  }

  @Test
  void sinkInInterleaveFollowsTheDocumentedExample() {
    Row row = new Row(b("r"), List.of(cell("A", "A", 1, "w"), cell("A", "B", 2, "x"), cell("B", "B", 4, "z")));
    RowFilter f = chain(
        family("A"),
        interleave(passAll(), chain(label("foo"), sink())),
        qualifier("B"));
    assertEquals("A:A@1=w[foo] A:B@2=x[foo] A:B@2=x", run(f, row));
  }

  @Test
  void sinkInsideBothInterleaveBranchesDuplicates() {
    assertEquals("f1:b@20=x f1:b@20=x", run(chain(qualifier("b"), interleave(sink(), sink()))));
  }

  @Test
  void sinkedCellsSurviveABlockingParent() {
    assertEquals("f2:a@5=y f2:c@7=",
        run(chain(interleave(chain(family("f2"), sink()), blockAll()), blockAll())));
  }

  @Test
  void compiledFilterIsReusableAcrossRows() {
    CompiledFilter c = RowFilters.compile(chain(qualifier("b"), label("l")));
    assertEquals("f1:b@20=x[l]", render(c.apply(sample())));
    assertEquals("", render(c.apply(new Row(b("k"), List.of(cell("f", "a", 1, "v"))))));
    assertEquals("f1:b@20=x[l]", render(c.apply(sample())));
  }
}
