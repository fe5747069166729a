package io.tabula.actors.tablet;

import io.tabula.actors.master.DirectoryCache;
import io.tabula.actors.master.Master;
import io.tabula.persistence.tablet.TabletServer;
import org.apache.pekko.actor.typed.ActorRef;

/**
 * What every tablet actor on a node shares: the node's engine (commit log, block cache,
 * compaction threads and open tablets), its copy of the master's directory, and a
 * reference to the master (a singleton proxy).
 */
public record TabletNode(TabletServer server, DirectoryCache directory, ActorRef<Master.Command> master,
    TabletSettings settings) {}
