package io.tabula.cluster.security;

import com.google.protobuf.CodedInputStream;
import com.google.protobuf.Descriptors.Descriptor;
import com.google.protobuf.Descriptors.FieldDescriptor;
import com.google.protobuf.WireFormat;
import java.io.IOException;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;

/**
 * The resource a request names, read from its message's bytes without parsing the whole:
 * the top-level string fields that name a resource in Cloud Bigtable's requests ({@code
 * authorized_view_name}, {@code table_name}, {@code name}, {@code parent}, {@code resource}, a restore's
 * {@code backup}, and the {@code name} inside an update's {@code authorized_view}, {@code table} or {@code backup}),
 * every other field skipped. Stateless.
 */
public final class ResourceFields {
  private static final Set<String> NAMES = Set.of("authorized_view_name", "table_name", "name", "parent",
      "resource", "backup");

  /** Messages whose {@code name} names the resource of an update that has no name of its own. */
  private static final Set<String> NESTED = Set.of("authorized_view", "table", "backup");
  /** The key of such a name: read after every top-level name (Resource). */
  public static final String NESTED_NAME = "authorized_view.name|table.name|backup.name";

  private ResourceFields() {}

  /**
   * The resource-naming fields of the message of type {@code type} in {@code bytes[offset,
   * offset + length)}, by field name, each as its last occurrence gives it (as protobuf's parser
   * reads the message: an empty last occurrence is an empty value, which names nothing); empty
   * for bytes that are not such a message (the services refuse those, naming the field).
   */
  public static Map<String, String> of(Descriptor type, byte[] bytes, int offset, int length) {
    Map<String, String> out = new HashMap<>();
    CodedInputStream in = CodedInputStream.newInstance(bytes, offset, length);
    try {
      while (true) {
        int tag = in.readTag();
        if (tag == 0) {
          return out;
        }
        FieldDescriptor f = type.findFieldByNumber(WireFormat.getTagFieldNumber(tag));
        if (f != null && f.getType() == FieldDescriptor.Type.STRING && NAMES.contains(f.getName())
            && WireFormat.getTagWireType(tag) == WireFormat.WIRETYPE_LENGTH_DELIMITED) {
          // Every occurrence, empty or not: protobuf's parser takes the last one, and so must this.
          out.put(f.getName(), in.readString());
        } else if (f != null && f.getType() == FieldDescriptor.Type.MESSAGE && NESTED.contains(f.getName())
            && WireFormat.getTagWireType(tag) == WireFormat.WIRETYPE_LENGTH_DELIMITED) {
          // The resource an update names inside what it updates (UpdateAuthorizedView, UpdateTable).
          byte[] nested = in.readByteArray();
          Map<String, String> inner = of(f.getMessageType(), nested, 0, nested.length);
          if (inner.containsKey("name")) {
            out.put(NESTED_NAME, inner.get("name"));
          }
        } else if (!in.skipField(tag)) {
          return out;
        }
      }
    } catch (IOException e) {
      return Map.of(); // not protobuf: refused by the services with the field named (MessageCheck)
    }
  }
}
