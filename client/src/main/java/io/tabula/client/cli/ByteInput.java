package io.tabula.client.cli;

import java.io.Closeable;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;

/**
 * An input file read byte by byte through a buffer, counting the bytes consumed (for a
 * progress bar). The import formats are read as bytes because their delimiters are all
 * ASCII, which never occurs inside a multi-byte UTF-8 sequence; each field is then decoded
 * strictly, so text that is not UTF-8 is reported on the line it is on. Owns the stream;
 * not thread-safe.
 */
final class ByteInput implements Closeable {
  private final InputStream in;
  private final byte[] buf = new byte[1 << 16];
  private int pos;
  private int limit;
  private long consumed;

  ByteInput(InputStream in) {
    this.in = in;
  }

  /** The next byte (0..255), or -1 at the end of the input. */
  int read() throws IOException {
    if (pos == limit) {
      int n = in.read(buf, 0, buf.length);
      if (n <= 0) {
        return -1;
      }
      pos = 0;
      limit = n;
    }
    consumed++;
    return buf[pos++] & 0xff;
  }

  /** The byte {@link #read} would return next, without consuming it. */
  int peek() throws IOException {
    int b = read();
    if (b >= 0) {
      pos--;
      consumed--;
    }
    return b;
  }

  /** Bytes consumed so far. */
  long consumed() {
    return consumed;
  }

  /** {@code len} bytes of {@code b} decoded as UTF-8, refusing malformed sequences. */
  static String utf8(byte[] b, int off, int len) throws CharacterCodingException {
    return StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
        .onUnmappableCharacter(CodingErrorAction.REPORT).decode(ByteBuffer.wrap(b, off, len)).toString();
  }

  @Override
  public void close() throws IOException {
    in.close();
  }
}
