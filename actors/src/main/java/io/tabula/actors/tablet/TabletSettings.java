package io.tabula.actors.tablet;

import com.typesafe.config.Config;
import java.time.Duration;

/**
 * The {@code tabula.tablet} settings, read once.
 *
 * @param splitBytes a tablet larger than this splits in two (paper §5: 100-200 MB)
 * @param checkInterval how often a tablet checks its size and reports its files to the master
 * @param closeIdleAfter a tablet neither read nor written for this long closes, its memtable
 *     flushed (it opens again at its next request); zero: never
 */
public record TabletSettings(long splitBytes, Duration checkInterval, Duration closeIdleAfter) {
  /** Settings whose tablets never close for being idle. */
  public TabletSettings(long splitBytes, Duration checkInterval) {
    this(splitBytes, checkInterval, Duration.ZERO);
  }

  public static TabletSettings from(Config tablet) {
    return new TabletSettings(tablet.getBytes("split-bytes"), tablet.getDuration("check-interval"),
        tablet.getDuration("close-idle-after"));
  }
}
