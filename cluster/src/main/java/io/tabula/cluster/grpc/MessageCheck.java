package io.tabula.cluster.grpc;

import com.google.protobuf.CodedInputStream;
import com.google.protobuf.Descriptors.Descriptor;
import com.google.protobuf.Descriptors.FieldDescriptor;
import com.google.protobuf.UnsafeByteOperations;
import com.google.protobuf.WireFormat;
import java.io.IOException;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;

/**
 * Says what is wrong with the bytes of a request message, naming the field, before (or
 * instead of) protobuf's parser, whose refusals ("Protocol message had too many levels of
 * nesting", "invalid UTF-8") name no field. It walks the wire format with the message's
 * descriptor, one field at a time with an explicit stack (no recursion, so any nesting costs
 * heap in proportion to the bytes, not stack), and reports the first of:
 *
 * <ol>
 *   <li>a message nested deeper than {@value #MAX_DEPTH} levels (protobuf's own limit):
 *       {@code filter.chain.filters[0].chain.filters[0]...: nested more than 100 messages deep};
 *   <li>a {@code string} field whose bytes are not UTF-8: {@code table_name: is not valid UTF-8};
 *   <li>bytes that are not protobuf at all (a truncated field, a bad tag, a length past the
 *       end): the field being read when it went wrong.
 * </ol>
 *
 * <p>Cost: one pass over the bytes; a path is built only for the problem found. Stateless
 * and thread-safe.
 */
final class MessageCheck {
  /** How deep messages may nest: protobuf-java's default recursion limit, which its parser enforces anyway. */
  static final int MAX_DEPTH = 100;

  /** A field that is wrong, and why. */
  record Problem(String field, String problem) {}

  /** One message being read: its type, where its bytes end, its path and how often each field was seen. */
  private record Frame(Descriptor type, int end, String path, Map<Integer, Integer> seen) {}

  private MessageCheck() {}

  /**
   * The first problem in {@code bytes[offset, offset + length)} read as a {@code type} message,
   * or empty when the bytes are a well-formed message within these limits.
   */
  static Optional<Problem> of(Descriptor type, byte[] bytes, int offset, int length) {
    CodedInputStream in = CodedInputStream.newInstance(bytes, offset, length);
    ArrayDeque<Frame> stack = new ArrayDeque<>();
    stack.push(new Frame(type, length, "", new HashMap<>()));
    String field = "request";
    try {
      while (!stack.isEmpty()) {
        Frame f = stack.peek();
        if (in.getTotalBytesRead() >= f.end()) {
          if (in.getTotalBytesRead() > f.end()) {
            return Optional.of(new Problem(name(f.path()), "a field runs past the end of its message"));
          }
          stack.pop();
          continue;
        }
        int tag = in.readTag();
        int number = WireFormat.getTagFieldNumber(tag);
        int wireType = WireFormat.getTagWireType(tag);
        FieldDescriptor fd = f.type().findFieldByNumber(number);
        field = fd == null ? join(f.path(), "field " + number) : join(f.path(), fd.getName()) + index(fd, f, number);
        if (fd == null || wireType != WireFormat.WIRETYPE_LENGTH_DELIMITED) {
          if (!in.skipField(tag)) {
            return Optional.of(new Problem(field, "ends a group that never started"));
          }
          continue;
        }
        int size = in.readRawVarint32();
        if (size < 0 || in.getTotalBytesRead() + size > f.end()) {
          return Optional.of(new Problem(field, "is longer than the message that holds it"));
        }
        if (fd.getJavaType() == FieldDescriptor.JavaType.MESSAGE) {
          if (stack.size() >= MAX_DEPTH) {
            return Optional.of(new Problem(field, "nested more than " + MAX_DEPTH + " messages deep"));
          }
          stack.push(new Frame(fd.getMessageType(), in.getTotalBytesRead() + size, field, new HashMap<>()));
        } else if (fd.getType() == FieldDescriptor.Type.STRING) {
          if (!UnsafeByteOperations.unsafeWrap(in.readRawBytes(size)).isValidUtf8()) {
            return Optional.of(new Problem(field, "is not valid UTF-8"));
          }
        } else {
          in.skipRawBytes(size);
        }
      }
    } catch (IOException e) {
      return Optional.of(new Problem(field, "is not valid protobuf (" + e.getMessage() + ")"));
    }
    return Optional.empty();
  }

  /** {@code [i]} for the i-th value of a repeated field (counting from 0), else nothing. */
  private static String index(FieldDescriptor fd, Frame f, int number) {
    if (!fd.isRepeated()) {
      return "";
    }
    int i = f.seen().merge(number, 1, Integer::sum) - 1;
    return "[" + i + "]";
  }

  private static String join(String path, String name) {
    return path.isEmpty() ? name : path + "." + name;
  }

  private static String name(String path) {
    return path.isEmpty() ? "request" : path;
  }
}
