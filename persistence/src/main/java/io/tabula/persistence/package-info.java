/** The Tabula storage engine (plain Java, no Pekko). */
package io.tabula.persistence;
