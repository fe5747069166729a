package io.tabula.protocol.kryo;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import org.junit.jupiter.api.Test;

/** Unit tier: reading and checking {@code tabula.kryo}. */
class KryoSettingsTest {

  private static Config with(String registrations) {
    return ConfigFactory.parseString("tabula.kryo.registrations { " + registrations + " }")
        .withFallback(ConfigFactory.defaultReference());
  }

  @Test
  void referenceConfigurationIsValid() {
    KryoSettings settings = KryoSettings.fromConfig(ConfigFactory.defaultReference());
    assertEquals(128 << 20, settings.maxMessageSize());
    assertEquals(32, settings.registrations().get("[B"));
  }

  @Test
  void moduleRegistrationsAddToTheBaseOnesAndNullDropsOne() {
    KryoSettings settings =
        KryoSettings.fromConfig(with("\"a.B$C\" = 1000, \"java.util.UUID\" = null"));
    assertEquals(1000, settings.registrations().get("a.B$C"));
    assertTrue(settings.registrations().containsKey("java.util.ArrayList"));
    assertTrue(!settings.registrations().containsKey("java.util.UUID"));
  }

  @Test
  void duplicateIdsAreRefusedNamingBothClasses() {
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class, () -> KryoSettings.fromConfig(with("\"a.X\" = 32")));
    assertTrue(e.getMessage().contains("a.X") && e.getMessage().contains("[B"), e.getMessage());
  }

  @Test
  void reservedAndNonIntegerIdsAreRefused() {
    assertThrows(
        IllegalArgumentException.class, () -> KryoSettings.fromConfig(with("\"a.X\" = 3")));
    assertThrows(
        IllegalArgumentException.class, () -> KryoSettings.fromConfig(with("\"a.X\" = \"one\"")));
  }

  @Test
  void missingClassFailsWhenTheFactoryIsBuilt() {
    KryoSettings settings = KryoSettings.fromConfig(with("\"no.such.Clazz\" = 1000"));
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class,
            () -> new KryoFactory(settings, getClass().getClassLoader(), null));
    assertTrue(e.getMessage().contains("no.such.Clazz"), e.getMessage());
  }
}
