/** Benchmarks: the paper's Figure 6 workloads. */
package io.tabula.bench;
