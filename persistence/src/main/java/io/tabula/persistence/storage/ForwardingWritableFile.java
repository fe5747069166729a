package io.tabula.persistence.storage;

import java.io.IOException;

/**
 * A {@link WritableFile} that hands every call to another one: a base for files that change a
 * few calls. {@link #syncsBesideAppends} is not handed on (it stays false): a file that changes
 * calls may keep state that one thread at a time must own.
 */
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
  public void flush() throws IOException {
    delegate.flush();
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
