package io.tabula.persistence.journal;

import java.io.IOException;

/**
 * A newer writer has fenced this epoch of the master's journal ({@link MasterJournal}): another
 * master has read the journal and goes on from what it read, so this one must write nothing
 * more and act no more. The records of the append that found the fence were not acknowledged;
 * whether the newer master read them is unknown.
 */
public final class JournalFencedException extends IOException {
  private static final long serialVersionUID = 1L;

  public JournalFencedException(String dir, long epoch) {
    super("the master's journal epoch " + epoch + " in " + dir + " is fenced: a newer master has taken over");
  }
}
