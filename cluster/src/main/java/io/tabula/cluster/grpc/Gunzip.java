package io.tabula.cluster.grpc;

import io.tabula.persistence.encoding.ByteSink;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.util.zip.GZIPInputStream;
import java.util.zip.ZipException;
import org.apache.pekko.util.ByteString;

/**
 * The one gRPC message of a request body, decompressed when its frame says it is gzip
 * compressed, never to more than a limit: a few kilobytes of gzip can stand for gigabytes
 * of zeros, and Pekko gRPC's own decompression has no bound. Stateless.
 */
final class Gunzip {
  private static final int FRAME_HEADER = 5;

  private Gunzip() {}

  /**
   * {@code body} with its message decompressed (frame flag 0), or unchanged when it is not
   * one compressed message (other framing problems are found and answered later).
   *
   * @throws org.apache.pekko.grpc.GrpcServiceException RESOURCE_EXHAUSTED when the message
   *     decompresses to more than {@code limit} bytes, INVALID_ARGUMENT when it is not gzip
   */
  static ByteString frame(ByteString body, long limit) {
    if (body.size() < FRAME_HEADER || body.apply(0) != 1
        || (ByteSink.getIntAt(body.take(FRAME_HEADER).toArrayUnsafe(), 1) & 0xFFFFFFFFL) != body.size() - FRAME_HEADER) {
      return body;
    }
    byte[] plain = inflate(body.drop(FRAME_HEADER).iterator().asInputStream(), limit);
    byte[] out = new byte[FRAME_HEADER + plain.length];
    ByteSink.putIntAt(out, 1, plain.length);
    System.arraycopy(plain, 0, out, FRAME_HEADER, plain.length);
    return ByteString.fromArrayUnsafe(out);
  }

  private static byte[] inflate(InputStream compressed, long limit) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    byte[] buffer = new byte[32 * 1024];
    try (GZIPInputStream in = new GZIPInputStream(compressed)) {
      for (int n = in.read(buffer); n >= 0; n = in.read(buffer)) {
        if (out.size() + (long) n > limit) {
          throw GrpcErrors.exhausted("request", "decompresses to more than " + limit
              + " bytes, the limit for this method");
        }
        out.write(buffer, 0, n);
      }
    } catch (ZipException e) {
      throw GrpcErrors.invalid("request", "is marked gzip but is not: " + e.getMessage());
    } catch (IOException e) {
      throw GrpcErrors.invalid("request", "is marked gzip but is cut short: " + e.getMessage());
    }
    return out.toByteArray();
  }
}
