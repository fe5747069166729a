package io.tabula.actors.tablet;

import com.typesafe.config.Config;
import java.time.Duration;

/**
 * The {@code tabula.tablet} settings, read once.
 *
 * @param splitBytes a tablet larger than this splits in two (paper §5: 100-200 MB)
 * @param checkInterval how often a tablet checks its size and reports its files to the master
 */
public record TabletSettings(long splitBytes, Duration checkInterval) {
  public static TabletSettings from(Config tablet) {
    return new TabletSettings(tablet.getBytes("split-bytes"), tablet.getDuration("check-interval"));
  }
}
