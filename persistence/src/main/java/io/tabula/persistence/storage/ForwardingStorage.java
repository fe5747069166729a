package io.tabula.persistence.storage;

import java.io.IOException;
import java.util.List;

/**
 * A {@link Storage} that hands every call to another one: a base for storages that change a
 * few calls (tests that inject faults, a storage that counts). The fence ({@link #fence},
 * {@link #isFenced}), {@link #createNew} and {@link #createNewInFolder} are not forwarded: their
 * defaults go through this storage's own {@link #create} and {@link #exists}, as they would on
 * a disk that behaves as this one does (so {@code createNew} is a check, then a create, here,
 * and {@code createNewInFolder} a look at the folder first).
 */
public abstract class ForwardingStorage implements Storage {
  protected final Storage delegate;

  protected ForwardingStorage(Storage delegate) {
    this.delegate = delegate;
  }

  @Override
  public WritableFile create(String path) throws IOException {
    return delegate.create(path);
  }

  @Override
  public void createDirectories(String dir) throws IOException {
    delegate.createDirectories(dir);
  }

  @Override
  public ReadableFile open(String path) throws IOException {
    return delegate.open(path);
  }

  @Override
  public boolean exists(String path) {
    return delegate.exists(path);
  }

  @Override
  public long size(String path) throws IOException {
    return delegate.size(path);
  }

  @Override
  public long modifiedMillis(String path) throws IOException {
    return delegate.modifiedMillis(path);
  }

  @Override
  public List<String> list(String dir) throws IOException {
    return delegate.list(dir);
  }

  @Override
  public void delete(String path) throws IOException {
    delegate.delete(path);
  }

  @Override
  public void rename(String from, String to) throws IOException {
    delegate.rename(from, to);
  }

  @Override
  public boolean renameIfAbsent(String from, String to) throws IOException {
    return delegate.renameIfAbsent(from, to);
  }

  @Override
  public void syncDirectory(String dir) throws IOException {
    delegate.syncDirectory(dir);
  }

  /** The storage it forwards to, as errors and logs name it (a root's path or URI). */
  @Override
  public String toString() {
    return delegate.toString();
  }
}
