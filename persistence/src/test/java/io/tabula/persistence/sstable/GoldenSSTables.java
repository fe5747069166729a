package io.tabula.persistence.sstable;

import io.tabula.persistence.encoding.ByteArrays;
import io.tabula.persistence.encoding.ByteSink;
import io.tabula.persistence.model.CellKey;
import io.tabula.persistence.model.CellKind;
import io.tabula.persistence.storage.FileStorage;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Locale;
import java.util.NavigableMap;
import java.util.TreeMap;

/**
 * The fixed content of the golden SSTables in {@code src/test/resources/golden/sstable/}:
 * the paper's Webtable example (Figure 1) and a few tombstones. To regenerate after a
 * deliberate format change (bump {@link SSTableFormat#FORMAT_VERSION} too), run {@link
 * #main} with the folder to write into.
 */
final class GoldenSSTables {
  static final String RESOURCE_DIR = "/golden/sstable/";

  private GoldenSSTables() {}

  static String fileName(Compression c) {
    return "webtable-" + c.name().toLowerCase(Locale.ROOT) + ".sst";
  }

  static SSTableOptions options(Compression c) {
    return new SSTableOptions(256, c, 10, 4);
  }

  static NavigableMap<CellKey, byte[]> content() {
    NavigableMap<CellKey, byte[]> m = new TreeMap<>(CellKey.ORDER);
    byte[] cnn = ByteArrays.utf8("com.cnn.www");
    byte[] anchor = ByteArrays.utf8("anchor");
    byte[] contents = ByteArrays.utf8("contents");
    m.put(CellKey.put(cnn, anchor, ByteArrays.utf8("cnnsi.com"), 9, 11), ByteArrays.utf8("CNN"));
    m.put(CellKey.put(cnn, anchor, ByteArrays.utf8("my.look.ca"), 8, 10), ByteArrays.utf8("CNN.com"));
    for (int t = 6; t >= 3; t--) {
      String page = "<html><head><title>CNN</title></head><body>" + "<p>news news news</p>".repeat(4 + t)
          + "</body></html>";
      m.put(CellKey.put(cnn, contents, ByteArrays.EMPTY, t, t), ByteArrays.utf8(page));
    }
    byte[] example = ByteArrays.utf8("com.example.www");
    m.put(CellKey.of(example, ByteArrays.EMPTY, ByteArrays.EMPTY, 0, 20, CellKind.DELETE_ROW), ByteArrays.EMPTY);
    m.put(CellKey.of(example, anchor, ByteArrays.EMPTY, 0, 19, CellKind.DELETE_FAMILY), ByteArrays.EMPTY);
    byte[] range = new byte[16];
    ByteSink.putLongAt(range, 0, 0);
    ByteSink.putLongAt(range, 8, Long.MAX_VALUE);
    m.put(CellKey.of(example, contents, ByteArrays.EMPTY, 0, 18, CellKind.DELETE_COLUMN), range);
    m.put(CellKey.put(example, contents, ByteArrays.EMPTY, 2, 17), ByteArrays.utf8("<html>example</html>"));
    for (int i = 0; i < 6; i++) {
      m.put(CellKey.put(ByteArrays.utf8("org.apache.www"), ByteArrays.utf8("language"), ByteArrays.utf8("q" + i), 1,
          30 + i), ByteArrays.utf8("EN"));
    }
    return m;
  }

  /** Writes the golden files into {@code args[0]}. */
  public static void main(String[] args) throws IOException {
    FileStorage storage = new FileStorage(Path.of(args[0]));
    for (Compression c : Compression.values()) {
      SSTableInfo info = TestTables.write(storage, fileName(c), options(c), content());
      System.out.println(fileName(c) + ": " + info);
    }
  }
}
