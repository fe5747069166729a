package io.tabula.actors.tablet;

import io.tabula.actors.master.DirectoryCache;
import io.tabula.actors.master.Master;
import io.tabula.persistence.tablet.TabletServer;
import org.apache.pekko.actor.typed.ActorRef;

/**
 * What every tablet actor on a node shares: the node's name in the cluster, its engine
 * (commit log, block cache, compaction threads and open tablets), its copy of the master's
 * directory, a reference to the master (a singleton proxy), and the list of tablets served
 * here for direct reads.
 */
public record TabletNode(String name, TabletServer server, DirectoryCache directory, ActorRef<Master.Command> master,
    TabletSettings settings, LocalTablets local) {
  /** A node whose served tablets start out none. */
  public TabletNode(String name, TabletServer server, DirectoryCache directory, ActorRef<Master.Command> master,
      TabletSettings settings) {
    this(name, server, directory, master, settings, new LocalTablets());
  }
}
