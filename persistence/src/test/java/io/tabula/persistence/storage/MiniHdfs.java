package io.tabula.persistence.storage;

import java.io.IOException;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hdfs.MiniDFSCluster;

/**
 * A real HDFS (one namenode, one datanode) inside the test's JVM, on 127.0.0.1, with its
 * files under a temporary folder: Hadoop's own test cluster, so the HDFS tests talk to the
 * real namenode and datanode protocols. Starts in about ten seconds.
 */
public final class MiniHdfs implements AutoCloseable {
  private final MiniDFSCluster cluster;

  private MiniHdfs(MiniDFSCluster cluster) {
    this.cluster = cluster;
  }

  public static MiniHdfs start(Path base) throws IOException {
    Configuration conf = new Configuration();
    conf.set(MiniDFSCluster.HDFS_MINIDFS_BASEDIR, base.toAbsolutePath().toString());
    conf.set("dfs.namenode.rpc-address", "127.0.0.1:0");
    conf.set("dfs.datanode.address", "127.0.0.1:0");
    conf.set("dfs.datanode.http.address", "127.0.0.1:0");
    conf.set("dfs.datanode.ipc.address", "127.0.0.1:0");
    conf.set("dfs.namenode.http-address", "127.0.0.1:0");
    // Datanodes take block recovery orders on their heartbeat: each second (3 s by default)
    // makes a lease recovery, so fencing a log, about a second quicker.
    conf.set("dfs.heartbeat.interval", "1");
    // A file closes once its last block is committed by the client, without waiting for the
    // datanode's report that it is complete (the data was acknowledged by the pipeline);
    // Hadoop 3 offers this for clusters whose files are closed often, as Tabula's are.
    conf.set("dfs.namenode.file.close.num-committed-allowed", "1");
    long t = System.nanoTime();
    MiniDFSCluster c = new MiniDFSCluster.Builder(conf).numDataNodes(1).build();
    c.waitActive();
    System.out.printf("MiniHdfs: HDFS up at %s in %.1f s%n", c.getURI(), (System.nanoTime() - t) / 1e9);
    return new MiniHdfs(c);
  }

  /** The namenode, such as {@code hdfs://127.0.0.1:40123}. */
  public URI uri() {
    return cluster.getURI();
  }

  /** A new client on {@code /<folder>} of this HDFS, with Tabula's default client settings. */
  public HdfsStorage storage(String folder) throws IOException {
    return new HdfsStorage(URI.create(uri() + "/" + folder), new Configuration(), Duration.ofSeconds(60));
  }

  /** Stops every datanode: blocks can be neither written nor recovered until they return. */
  public void stopDataNodes() {
    while (!cluster.getDataNodes().isEmpty()) {
      cluster.stopDataNode(0);
    }
  }

  @Override
  public void close() {
    cluster.shutdown(true);
  }
}
