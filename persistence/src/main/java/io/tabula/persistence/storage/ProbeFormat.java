package io.tabula.persistence.storage;

/**
 * Constants of a storage probe file; see docs/formats/storage-probe.md. The layout is the
 * storage root identity's ({@link RootIdFormat}: magic, version, a 128-bit id, CRC32C; 32
 * bytes), with this magic number and version; the id is the probe's nonce.
 */
final class ProbeFormat {
  private ProbeFormat() {}

  /** ASCII "TBLAPROB": TaBuLA PROBe. */
  static final long MAGIC = 0x54424C4150524F42L;
  static final int VERSION = 1;

  /** The folder at the top of the storage root that holds the probes, one file each. */
  static final String FOLDER = "probes";
}
