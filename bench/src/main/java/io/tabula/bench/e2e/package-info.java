/** The paper's Figure 6 end to end: a Tabula node process driven by the Tabula and official Java clients. */
package io.tabula.bench.e2e;
