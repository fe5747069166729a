package io.tabula.cluster;

import io.grpc.MethodDescriptor;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;

/**
 * gRPC methods that send and receive raw bytes with grpc-java, so a test sends exactly the
 * bytes it built (a message no protobuf builder would write, a broken one, none at all)
 * rather than what a client library that validates would send.
 */
public final class RawGrpc {
  private RawGrpc() {}

  /** Bytes as they are; a null request is sent as an empty message. */
  public static final MethodDescriptor.Marshaller<byte[]> BYTES = new MethodDescriptor.Marshaller<>() {
    @Override
    public InputStream stream(byte[] value) {
      return new ByteArrayInputStream(value == null ? new byte[0] : value);
    }

    @Override
    public byte[] parse(InputStream stream) {
      try {
        return stream.readAllBytes();
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
  };

  /** Method {@code rpc} of {@code service} (its full name, e.g. {@code google.bigtable.v2.Bigtable}) over raw bytes. */
  public static MethodDescriptor<byte[], byte[]> method(String service, String rpc, MethodDescriptor.MethodType type) {
    return MethodDescriptor.<byte[], byte[]>newBuilder().setType(type)
        .setFullMethodName(MethodDescriptor.generateFullMethodName(service, rpc))
        .setRequestMarshaller(BYTES).setResponseMarshaller(BYTES).build();
  }
}
