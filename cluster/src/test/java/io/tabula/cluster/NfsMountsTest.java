package io.tabula.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A storage root on NFS is refused at start unless the mount gives what Tabula's file
 * operations need across machines (hole S5 of the fencing review; docs/deploy.md): NFS 4.1 or
 * later, whose sessions make a retransmitted LINK or exclusive CREATE exactly-once (on NFSv3
 * and 4.0 one whose reply was lost fails with EEXIST, and the writer then deletes an SSTable its
 * own published manifest names); no attribute caching ({@code noac}, or {@code actimeo=0}), and
 * no lookup cache ({@code lookupcache=none}), so that a node sees a {@code FENCED} marker or a
 * manifest another node created as soon as it was created.
 *
 * <p>These machines cannot mount NFS (no server, no privileges), so no test here runs a node on
 * NFS. The parser of {@code /proc/self/mountinfo} and the decision are pure functions, tested on
 * sample lines as Linux writes them; the reading of this machine's own mountinfo is tested on
 * the temporary folder, which is not on NFS.
 */
class NfsMountsTest {
  private static final String ROOT = "22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw,errors=remount-ro";
  /** NFS 4.2 mounted with noac,lookupcache=none (noac also shows as the four ac... times of 0). */
  private static final String GOOD = "45 22 0:40 / /srv/tabula rw,relatime shared:30 - nfs4 fs1:/export/tabula "
      + "rw,sync,vers=4.2,rsize=1048576,wsize=1048576,namlen=255,acregmin=0,acregmax=0,acdirmin=0,acdirmax=0,"
      + "hard,noac,proto=tcp,timeo=600,retrans=2,sec=sys,clientaddr=10.0.0.7,lookupcache=none,local_lock=none,"
      + "addr=10.0.0.9";
  /** NFSv3 with the defaults: attribute and lookup caches on. */
  private static final String V3 = "46 22 0:41 / /mnt/old rw,relatime shared:31 - nfs fs1:/export/old "
      + "rw,vers=3,rsize=1048576,wsize=1048576,namlen=255,hard,proto=tcp,timeo=600,retrans=2,sec=sys,"
      + "mountaddr=10.0.0.9,mountvers=3,mountport=20048,mountproto=udp,local_lock=none,addr=10.0.0.9";
  /** NFS 4.0 mounted with actimeo=0 (shown as the four times) but the lookup cache on. */
  private static final String V40 = "47 22 0:42 / /mnt/four rw,relatime shared:32 - nfs4 fs1:/export/four "
      + "rw,vers=4.0,rsize=1048576,wsize=1048576,namlen=255,acregmin=0,acregmax=0,acdirmin=0,acdirmax=0,hard,"
      + "proto=tcp,timeo=600,retrans=2,sec=sys,clientaddr=10.0.0.7,local_lock=none,addr=10.0.0.9";
  /** NFS 4.1 with lookupcache=none but the attribute cache on: actimeo=30 shows as the four times of 30. */
  private static final String CACHED = "48 22 0:43 / /mnt/cached rw,relatime shared:33 - nfs4 fs1:/export/c "
      + "rw,vers=4.1,acregmin=30,acregmax=30,acdirmin=30,acdirmax=30,hard,proto=tcp,lookupcache=none,addr=10.0.0.9";
  /** A mount point with a space, which mountinfo writes as \040. */
  private static final String SPACED = "49 22 0:44 / /mnt/my\\040share rw,relatime - nfs4 fs1:/x "
      + "rw,vers=4.2,noac,lookupcache=none,addr=10.0.0.9";

  private static final String MOUNTS = String.join("\n", ROOT, GOOD, V3, V40, CACHED, SPACED) + "\n";

  @Test
  void theMountOfAPathIsTheLongestMountPointThatHoldsIt() {
    assertEquals("/srv/tabula", mountOf("/srv/tabula/data").mountPoint());
    assertEquals("/srv/tabula", mountOf("/srv/tabula").mountPoint());
    // Whole names only: /srv/tabula2 is not under /srv/tabula.
    assertEquals("/", mountOf("/srv/tabula2/data").mountPoint());
    assertEquals("/mnt/my share", mountOf("/mnt/my share/tabula").mountPoint());
    assertEquals("nfs4", mountOf("/mnt/my share/tabula").type());
    // A later mount on the same point hides the earlier one.
    String over = MOUNTS + "60 45 0:50 / /srv/tabula rw,relatime - ext4 /dev/sdb1 rw\n";
    assertEquals("ext4", NfsMounts.mountOf(over, Path.of("/srv/tabula/data")).orElseThrow().type());
    // A mount under the data dir's mount, nearer to it, is its mount.
    String nested = MOUNTS + "61 45 0:51 / /srv/tabula/data rw,relatime - ext4 /dev/sdc1 rw\n";
    assertEquals("/srv/tabula/data", NfsMounts.mountOf(nested, Path.of("/srv/tabula/data/x")).orElseThrow()
        .mountPoint());
    assertEquals(Optional.empty(), NfsMounts.mountOf(GOOD + "\n", Path.of("/home")));
  }

  @Test
  void eachMissingOptionIsNamed() {
    assertEquals(List.of(), NfsMounts.missing(mountOf("/srv/tabula/data")));
    assertEquals(List.of(), NfsMounts.missing(mountOf("/mnt/my share")));
    assertEquals(List.of(), NfsMounts.missing(mountOf("/var/lib")), "not NFS");
    assertEquals(List.of(NfsMounts.VERSION, NfsMounts.NO_ATTRIBUTE_CACHE, NfsMounts.NO_LOOKUP_CACHE),
        NfsMounts.missing(mountOf("/mnt/old/tabula")));
    assertEquals(List.of(NfsMounts.VERSION, NfsMounts.NO_LOOKUP_CACHE), NfsMounts.missing(mountOf("/mnt/four")));
    assertEquals(List.of(NfsMounts.NO_ATTRIBUTE_CACHE), NfsMounts.missing(mountOf("/mnt/cached")));
    // actimeo=0 as given (the kernel shows it as the four times, but a line may carry it).
    String actimeo = "70 22 0:60 / /a rw - nfs fs1:/a rw,vers=4.1,actimeo=0,lookupcache=none\n";
    assertEquals(List.of(), NfsMounts.missing(NfsMounts.mountOf(actimeo, Path.of("/a")).orElseThrow()));
    // Only some of the four times at 0 still caches attributes; lookupcache=positive still caches names.
    String some = "71 22 0:61 / /b rw - nfs4 fs1:/b rw,vers=4.2,acregmin=0,acregmax=0,lookupcache=pos\n";
    assertEquals(List.of(NfsMounts.NO_ATTRIBUTE_CACHE, NfsMounts.NO_LOOKUP_CACHE),
        NfsMounts.missing(NfsMounts.mountOf(some, Path.of("/b")).orElseThrow()));
    // No version shown: not known to be 4.1 or later.
    String noVersion = "72 22 0:62 / /c rw - nfs fs1:/c rw,noac,lookupcache=none\n";
    assertEquals(List.of(NfsMounts.VERSION), NfsMounts.missing(NfsMounts.mountOf(noVersion, Path.of("/c"))
        .orElseThrow()));
  }

  @Test
  void aRootOnAnNfsMountWithoutTheOptionsIsRefusedUnlessAllowed() {
    StartRefusedException e = assertThrows(StartRefusedException.class,
        () -> NfsMounts.check(MOUNTS, Path.of("/mnt/old/tabula"), false));
    assertEquals(StartRefusedException.Reason.UNSAFE_NFS, e.reason(), e::getMessage);
    for (String option : List.of(NfsMounts.VERSION, NfsMounts.NO_ATTRIBUTE_CACHE, NfsMounts.NO_LOOKUP_CACHE)) {
      assertTrue(e.getMessage().contains(option), e.getMessage());
    }
    NfsMounts.check(MOUNTS, Path.of("/mnt/old/tabula"), true);
    NfsMounts.check(MOUNTS, Path.of("/srv/tabula/data"), false);
    NfsMounts.check(MOUNTS, Path.of("/var/lib/tabula"), false);
  }

  /** This machine's own mountinfo: the temporary folder is on some mount, and not on NFS here. */
  @Test
  void thisMachinesMountsAreReadAndItsTemporaryFolderPasses(@TempDir Path dir) throws IOException {
    Path mountinfo = Path.of("/proc/self/mountinfo");
    if (!Files.exists(mountinfo)) {
      return; // not Linux: a node checks nothing there
    }
    Path real = dir.toRealPath();
    NfsMounts.Mount m = NfsMounts.mountOf(Files.readString(mountinfo), real).orElseThrow();
    assertTrue(real.startsWith(m.mountPoint()), m::toString);
    NfsMounts.checkDataDir(dir, false);
  }

  private static NfsMounts.Mount mountOf(String path) {
    return NfsMounts.mountOf(MOUNTS, Path.of(path)).orElseThrow();
  }
}
