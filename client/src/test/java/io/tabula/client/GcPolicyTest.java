package io.tabula.client;

import static io.tabula.client.Fixtures.assertRefused;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The cbt-syntax reader and writer of GC policies, and the wire form. */
class GcPolicyTest {
  @Test
  void writtenPoliciesReadBackAsTheSameText() {
    for (String text : List.of(
        "never",
        "maxversions=3",
        "maxage=7d",
        "maxage=36h",
        "maxage=90m",
        "maxage=45s",
        "maxage=1500ms",
        "maxage=1h or maxversions=2",
        "maxage=1d and maxversions=5",
        "(maxage=1d and maxversions=5) or maxversions=10",
        "maxversions=1 and (maxage=2h or maxversions=3)",
        "((maxversions=1 or maxage=1s) and maxage=2m) or never")) {
      GcPolicy p = GcPolicy.parse(text);
      assertEquals(text, p.toString());
      assertEquals(p, GcPolicy.parse(p.toString()));
    }
  }

  @Test
  void builtPoliciesRoundTripThroughTextAndProto() {
    for (GcPolicy p : List.of(
        GcPolicy.never(),
        GcPolicy.maxVersions(1),
        GcPolicy.maxAge(Duration.ofDays(30)),
        GcPolicy.maxAge(Duration.ofMillis(250)),
        GcPolicy.or(GcPolicy.maxAge(Duration.ofHours(1)), GcPolicy.and(GcPolicy.maxVersions(2),
            GcPolicy.maxAge(Duration.ofMinutes(5)))),
        GcPolicy.and(GcPolicy.or(GcPolicy.maxVersions(1), GcPolicy.maxVersions(2)), GcPolicy.maxVersions(3)))) {
      assertEquals(p, GcPolicy.parse(p.toString()), "text of " + p);
      assertEquals(p, GcPolicy.fromProto(p.toProto()), "proto of " + p);
    }
  }

  @Test
  void anAgeIsWrittenInTheLargestUnitThatDividesItExactly() {
    assertEquals("maxage=250ms", GcPolicy.maxAge(Duration.ofMillis(250)).toString());
    assertEquals("maxage=60500ms", GcPolicy.maxAge(Duration.ofSeconds(60, 500_000_000)).toString());
    assertEquals("maxage=61s", GcPolicy.maxAge(Duration.ofSeconds(61)).toString());
    assertEquals("maxage=1510m", GcPolicy.maxAge(Duration.ofMinutes(1510)).toString());
    assertEquals("maxage=25h", GcPolicy.maxAge(Duration.ofHours(25)).toString());
    assertEquals("maxage=9223372036854775807s", GcPolicy.maxAge(Duration.ofSeconds(Long.MAX_VALUE)).toString());
  }

  @Test
  void andBindsTighterThanOr() {
    GcPolicy a = GcPolicy.maxVersions(1);
    GcPolicy b = GcPolicy.maxVersions(2);
    GcPolicy c = GcPolicy.maxVersions(3);
    assertEquals(GcPolicy.or(a, GcPolicy.and(b, c)),
        GcPolicy.parse("maxversions=1 or maxversions=2 and maxversions=3"));
    assertEquals(GcPolicy.or(GcPolicy.and(a, b), c),
        GcPolicy.parse("maxversions=1 and maxversions=2 or maxversions=3"));
    assertEquals(GcPolicy.or(a, b, c), GcPolicy.parse("maxversions=1 or maxversions=2 or maxversions=3"),
        "a run of ors is one union, not nested ones");
  }

  @Test
  void readsWordsInAnyCaseAndSpacesFreely() {
    assertEquals(GcPolicy.or(GcPolicy.maxVersions(2), GcPolicy.maxAge(Duration.ofDays(1))),
        GcPolicy.parse("  MaxVersions=2   OR\tmaxage=1d "));
    assertEquals(GcPolicy.never(), GcPolicy.parse("NEVER"));
  }

  @Test
  void ageUnits() {
    assertEquals(Duration.ofMillis(5), age("maxage=5ms"));
    assertEquals(Duration.ofSeconds(5), age("maxage=5s"));
    assertEquals(Duration.ofMinutes(5), age("maxage=5m"));
    assertEquals(Duration.ofHours(5), age("maxage=5h"));
    assertEquals(Duration.ofDays(5), age("maxage=5d"));
  }

  @Test
  void refusesWhatItCannotRead() {
    assertRefused("a rule is missing at the end", () -> GcPolicy.parse(""));
    assertRefused("a rule is missing at the end", () -> GcPolicy.parse("maxversions=1 or"));
    assertRefused("unknown rule 'forever'", () -> GcPolicy.parse("forever"));
    assertRefused("unexpected 'maxage=1d'", () -> GcPolicy.parse("maxversions=1 maxage=1d"));
    assertRefused("missing ')'", () -> GcPolicy.parse("(maxversions=1 or maxage=1d"));
    assertRefused("unexpected ')'", () -> GcPolicy.parse("maxversions=1)"));
    assertRefused("cannot read '@ 3'", () -> GcPolicy.parse("maxversions=1 @ 3"));
    assertRefused("maxage needs a number and a unit", () -> GcPolicy.parse("maxage=5"));
    assertRefused("maxage needs a number and a unit", () -> GcPolicy.parse("maxage=5w"));
    assertRefused("maxversions must be at least 1", () -> GcPolicy.parse("maxversions=0"));
    assertRefused("maxage must be positive", () -> GcPolicy.parse("maxage=0s"));
  }

  @Test
  void refusesNumbersTooLargeNamingThePolicy() {
    assertRefused("gc policy 'maxversions=99999999999'", () -> GcPolicy.parse("maxversions=99999999999"));
    assertRefused("gc policy 'maxage=99999999999999999999s'", () -> GcPolicy.parse("maxage=99999999999999999999s"));
    assertRefused("gc policy 'maxage=1000000000000000d'", () -> GcPolicy.parse("maxage=1000000000000000d"));
  }

  @Test
  void refusesBadPoliciesBuiltInCode() {
    assertRefused("maxversions must be at least 1", () -> GcPolicy.maxVersions(-1));
    assertRefused("maxage must be positive", () -> GcPolicy.maxAge(Duration.ofSeconds(-1)));
  }

  private static Duration age(String text) {
    return ((GcPolicy.MaxAge) GcPolicy.parse(text)).age();
  }
}
