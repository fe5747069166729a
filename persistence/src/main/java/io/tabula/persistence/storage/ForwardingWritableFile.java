package io.tabula.persistence.storage;

import java.io.IOException;

/** A {@link WritableFile} that hands every call to another one: a base for files that change a few calls. */
public abstract class ForwardingWritableFile implements WritableFile {
  protected final WritableFile delegate;

  protected ForwardingWritableFile(WritableFile delegate) {
    this.delegate = delegate;
  }

  @Override
  public String path() {
    return delegate.path();
  }

  @Override
  public void append(byte[] b, int off, int len) throws IOException {
    delegate.append(b, off, len);
  }

  @Override
  public long position() {
    return delegate.position();
  }

  @Override
  public void sync() throws IOException {
    delegate.sync();
  }

  @Override
  public void truncate(long size) throws IOException {
    delegate.truncate(size);
  }

  @Override
  public void close() throws IOException {
    delegate.close();
  }
}
