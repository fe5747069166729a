package io.tabula.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.hadoop.conf.Configuration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * HDFS observer reads are refused at start (hole S4 of the fencing review): with an
 * observer-reading proxy provider for the storage root's nameservice, {@code exists(FENCED)}
 * may be answered by an observer namenode that has not yet applied a fence another client
 * wrote through the active namenode (no read-your-writes across clients without {@code msync}),
 * so a fenced writer could acknowledge, and a fenced reader answer as current. Checked on the
 * Hadoop client's configuration alone, before any namenode is called, so no HDFS is needed.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class HdfsObserverReadsTest {
  private static final String KEY = "dfs.client.failover.proxy.provider.";
  private static final String HA = "ns1";
  private static final String PROVIDERS = "org.apache.hadoop.hdfs.server.namenode.ha.";

  @TempDir
  Path dir;

  @Test
  void aNodeWhoseHdfsClientReadsFromObserversIsRefused() throws IOException {
    Path site = dir.resolve("hdfs-site.xml");
    Files.writeString(site, """
        <?xml version="1.0"?>
        <configuration>
          <property><name>dfs.nameservices</name><value>ns1</value></property>
          <property><name>dfs.ha.namenodes.ns1</name><value>nn1,nn2,nn3</value></property>
          <property><name>dfs.namenode.rpc-address.ns1.nn1</name><value>127.0.0.1:1</value></property>
          <property><name>dfs.namenode.rpc-address.ns1.nn2</name><value>127.0.0.1:2</value></property>
          <property><name>dfs.namenode.rpc-address.ns1.nn3</name><value>127.0.0.1:3</value></property>
          <property><name>dfs.client.failover.max.attempts</name><value>1</value></property>
          <property><name>ipc.client.connect.max.retries</name><value>0</value></property>
          <property><name>dfs.client.failover.proxy.provider.ns1</name>
            <value>org.apache.hadoop.hdfs.server.namenode.ha.ObserverReadProxyProvider</value></property>
        </configuration>
        """);
    StartRefusedException e = assertThrows(StartRefusedException.class, () -> TabulaNode.start(
        ConfigFactory.parseMap(Map.of("tabula.node.data-dir", dir.resolve("data").toString(),
            "tabula.node.grpc-port", 0, "tabula.node.http-port", 0, "tabula.node.storage-uri", "hdfs://ns1/tabula",
            "tabula.node.hdfs.config-files", List.of(site.toString()), "tabula.node.master-start-timeout", "5s")))
        .close());
    assertEquals(StartRefusedException.Reason.HDFS_OBSERVER_READS, e.reason(), e::getMessage);
    assertTrue(e.getMessage().contains(KEY + HA), e.getMessage());
  }

  @Test
  void everyObserverReadingProviderOfTheRootsNameserviceIsRefused() {
    for (String provider : List.of("ObserverReadProxyProvider", "ObserverReadProxyProviderWithIPFailover",
        "RouterObserverReadProxyProvider", "RouterObserverReadConfiguredFailoverProxyProvider")) {
      StartRefusedException e = assertThrows(StartRefusedException.class,
          () -> StorageRoots.refuseObserverReads(client(Map.of(KEY + HA, PROVIDERS + provider)), root()), provider);
      assertEquals(StartRefusedException.Reason.HDFS_OBSERVER_READS, e.reason(), e::getMessage);
    }
    // A provider of the operator's that reads from observers, named or by its superclass.
    assertThrows(StartRefusedException.class, () -> StorageRoots.refuseObserverReads(
        client(Map.of(KEY + HA, "com.example.MyObserverReadProvider")), root()));
  }

  /**
   * A storage URI without a nameservice ({@code hdfs:///tabula}) is on the client's default
   * file system ({@code fs.defaultFS}), as Hadoop's client resolves it: that nameservice's
   * provider is the one the node's reads go through, and the one that is checked.
   */
  @Test
  void aRootOnTheDefaultFileSystemIsCheckedForTheDefaultsNameservice() {
    URI onDefault = URI.create("hdfs:///tabula");
    for (String defaultFs : List.of("hdfs://" + HA, "hdfs://" + HA + ":8020", "hdfs://" + HA + "/")) {
      StartRefusedException e = assertThrows(StartRefusedException.class, () -> StorageRoots.refuseObserverReads(
          client(Map.of("fs.defaultFS", defaultFs, KEY + HA, PROVIDERS + "ObserverReadProxyProvider")), onDefault),
          defaultFs);
      assertEquals(StartRefusedException.Reason.HDFS_OBSERVER_READS, e.reason(), e::getMessage);
      assertTrue(e.getMessage().contains(KEY + HA), e.getMessage());
    }
    StorageRoots.refuseObserverReads(client(Map.of("fs.defaultFS", "hdfs://other", KEY + HA,
        PROVIDERS + "ObserverReadProxyProvider")), onDefault);
    StorageRoots.refuseObserverReads(client(Map.of("fs.defaultFS", "hdfs://" + HA, KEY + HA,
        PROVIDERS + "ConfiguredFailoverProxyProvider")), onDefault);
  }

  @Test
  void providersThatReadFromTheActiveNamenodeAndOtherNameservicesAreLeftAlone() {
    StorageRoots.refuseObserverReads(client(Map.of()), root());
    StorageRoots.refuseObserverReads(client(Map.of(KEY + HA, PROVIDERS + "ConfiguredFailoverProxyProvider")), root());
    StorageRoots.refuseObserverReads(client(Map.of(KEY + HA, PROVIDERS + "RequestHedgingProxyProvider")), root());
    // Observer reads for another nameservice: the node's client never reads from it.
    StorageRoots.refuseObserverReads(client(Map.of(KEY + "other", PROVIDERS + "ObserverReadProxyProvider")),
        root());
  }

  private static URI root() {
    return URI.create("hdfs://" + HA + "/tabula");
  }

  private static Configuration client(Map<String, String> settings) {
    Configuration conf = new Configuration(false);
    settings.forEach(conf::set);
    return conf;
  }
}
