/** A YCSB binding ({@code site.ycsb.DB}) for the Tabula Java client, and the table it needs. */
package io.tabula.bench.ycsb;
