package io.tabula.bench;

/** What a scan returned: rows, and key plus value bytes. */
record ScanTally(long rows, long bytes) {}
