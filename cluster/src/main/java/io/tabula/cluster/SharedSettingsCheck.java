package io.tabula.cluster;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.apache.pekko.cluster.ConfigValidation;
import org.apache.pekko.cluster.Invalid;
import org.apache.pekko.cluster.JoinConfigCompatChecker;
import org.apache.pekko.cluster.Valid;

/**
 * Pekko's join-time check of the settings every node of a cluster must share, because a node
 * reasons about what another node does with them. A node whose value differs from the member's
 * is refused at join, naming the setting and both values; checked as {@link ProtocolCheck} is.
 *
 * <ul>
 *   <li>{@code tabula.master.sweep-files-grace}: the master's sweep deletes a file only once it
 *       has been unreferenced and unwritten that long, so that scans begun before a compaction
 *       replaced it can finish. The master is whichever node holds the lease: a node with a
 *       shorter grace would, once master, take files from under the scans the others let run.
 * </ul>
 *
 * <p>Made by Pekko through its public no-argument constructor. Stateless.
 */
public final class SharedSettingsCheck extends JoinConfigCompatChecker {
  /** The durations every node must share. */
  static final List<String> DURATIONS = List.of("tabula.master.sweep-files-grace");
  /** Where Pekko finds this check: a named entry of its checkers. */
  static final String CHECKER_KEY = "pekko.cluster.configuration-compatibility-check.checkers.tabula-shared-settings";

  public SharedSettingsCheck() {}

  @Override
  public scala.collection.immutable.Seq<String> requiredKeys() {
    return scala.jdk.javaapi.CollectionConverters.asScala(DURATIONS).toList();
  }

  /** {@code toCheck} holds the other node's keys, {@code actualConfig} this node's configuration. */
  @Override
  public ConfigValidation check(Config toCheck, Config actualConfig) {
    List<String> differ = new ArrayList<>();
    for (String key : DURATIONS) {
      Duration other = duration(toCheck, key);
      Duration own = duration(actualConfig, key);
      if (other == null || !other.equals(own)) {
        differ.add(key + ": the other node has " + describe(other) + ", this node " + describe(own)
            + ". Every node of a cluster must have the same value (docs/deploy.md); the node that joins is refused");
      }
    }
    return differ.isEmpty() ? Valid.getInstance()
        : new Invalid(scala.jdk.javaapi.CollectionConverters.asScala(differ).toList());
  }

  private static String describe(Duration d) {
    return d == null ? "no valid value" : d.toString();
  }

  /** The duration at {@code key}, or null when {@code c} has none or not a duration. */
  private static Duration duration(Config c, String key) {
    try {
      return c.hasPath(key) ? c.getDuration(key) : null;
    } catch (ConfigException.WrongType | ConfigException.BadValue e) {
      return null;
    }
  }
}
