package io.tabula.cluster.security;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigException;
import com.typesafe.config.ConfigObject;
import com.typesafe.config.ConfigValue;
import com.typesafe.config.ConfigValueType;
import java.nio.file.Path;
import java.security.PublicKey;
import java.security.interfaces.RSAPublicKey;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * How calls are authenticated: the {@code tabula.security} settings, read once, with every key
 * file they name read and turned into public keys. Keys other than those below ({@code admins},
 * {@code bindings}...) belong to other readers and are ignored here. Every key may be left out;
 * then it has the default named here (the node's {@code reference.conf} gives the same):
 *
 * <ul>
 *   <li>{@code tokens} (none): static bearer tokens, {@code [{principal = "user:ana@example.com",
 *       token = "..."}]}, kept only as {@code tokenDigests}, SHA-256 (hex) to principal;
 *   <li>{@code jwt.issuers} (none): {@link JwtIssuer}s, each with {@code issuer}, {@code audiences},
 *       one of {@code keys} (a JWK set file) and {@code public-key-pem}, {@code principal-claim}
 *       ({@code sub}) and {@code principal-prefix} ({@code user:});
 *   <li>{@code service-accounts} (none): Google service-account key files, or
 *       {@code {client-email, key-id, public-key-pem}} entries;
 *   <li>{@code jwt.audiences} ({@link #DEFAULT_AUDIENCES}) and {@code jwt.scopes}
 *       ({@link #DEFAULT_SCOPES}): the {@code aud}, or failing one the {@code scope}, a service
 *       account's self-signed JWT must name;
 *   <li>{@code clock-skew} (60s, at most 1h), {@code cache.max-entries} (10000 per cache).
 * </ul>
 *
 * <p>Immutable. {@link #from} throws {@link IllegalArgumentException} naming the key
 * ({@code tabula.security.jwt.issuers[1].keys}) for any bad setting or unreadable file, and never
 * quotes a token or a private key.
 */
public record AuthSettings(Map<String, Principal> tokenDigests, List<JwtIssuer> issuers,
    List<ServiceAccountKey> serviceAccounts, List<String> serviceAccountAudiences, List<String> serviceAccountScopes,
    Duration clockSkew, int cacheMaxEntries) {
  static final String PREFIX = "tabula.security.";
  static final List<String> DEFAULT_AUDIENCES =
      List.of("https://bigtable.googleapis.com/", "https://bigtableadmin.googleapis.com/");
  static final List<String> DEFAULT_SCOPES = List.of(
      "https://www.googleapis.com/auth/bigtable.data", "https://www.googleapis.com/auth/bigtable.data.readonly",
      "https://www.googleapis.com/auth/cloud-bigtable.data",
      "https://www.googleapis.com/auth/cloud-bigtable.data.readonly",
      "https://www.googleapis.com/auth/bigtable.admin", "https://www.googleapis.com/auth/bigtable.admin.cluster",
      "https://www.googleapis.com/auth/bigtable.admin.instance", "https://www.googleapis.com/auth/bigtable.admin.table",
      "https://www.googleapis.com/auth/cloud-bigtable.admin",
      "https://www.googleapis.com/auth/cloud-bigtable.admin.cluster",
      "https://www.googleapis.com/auth/cloud-bigtable.admin.table",
      "https://www.googleapis.com/auth/cloud-platform", "https://www.googleapis.com/auth/cloud-platform.read-only");
  static final Duration DEFAULT_CLOCK_SKEW = Duration.ofSeconds(60);
  static final Duration MAX_CLOCK_SKEW = Duration.ofHours(1);
  static final int DEFAULT_CACHE_MAX_ENTRIES = 10_000;

  /** @throws IllegalArgumentException for a skew outside 0 to 1 hour, or a negative cache size */
  public AuthSettings {
    tokenDigests = Map.copyOf(tokenDigests);
    issuers = List.copyOf(issuers);
    serviceAccounts = List.copyOf(serviceAccounts);
    serviceAccountAudiences = List.copyOf(serviceAccountAudiences);
    serviceAccountScopes = List.copyOf(serviceAccountScopes);
    if (clockSkew.isNegative() || clockSkew.compareTo(MAX_CLOCK_SKEW) > 0) {
      throw new IllegalArgumentException(PREFIX + "clock-skew must be between 0s and 1h, was " + clockSkew);
    }
    if (cacheMaxEntries < 0) {
      throw new IllegalArgumentException(PREFIX + "cache.max-entries must be 0 or more, was " + cacheMaxEntries);
    }
  }

  /**
   * Reads the {@code tabula.security} subtree; relative file names are resolved against
   * {@code baseDir}.
   */
  public static AuthSettings from(Config security, Path baseDir) {
    try {
      List<JwtIssuer> issuers = issuers(security, baseDir);
      List<ServiceAccountKey> accounts = serviceAccounts(security, baseDir);
      for (ServiceAccountKey account : accounts) {
        if (issuers.stream().anyMatch(i -> i.issuer().equals(account.clientEmail()))) {
          throw new IllegalArgumentException(PREFIX + "service-accounts: " + account.clientEmail()
              + " is also a jwt.issuers issuer; a token's iss must name one or the other");
        }
      }
      return new AuthSettings(tokens(security), issuers, accounts,
          strings(security, "jwt.audiences", DEFAULT_AUDIENCES), strings(security, "jwt.scopes", DEFAULT_SCOPES),
          security.hasPath("clock-skew") ? security.getDuration("clock-skew") : DEFAULT_CLOCK_SKEW,
          security.hasPath("cache.max-entries") ? security.getInt("cache.max-entries") : DEFAULT_CACHE_MAX_ENTRIES);
    } catch (ConfigException e) {
      throw new IllegalArgumentException(PREFIX.substring(0, PREFIX.length() - 1) + ": " + e.getMessage(), e);
    }
  }

  private static Map<String, Principal> tokens(Config security) {
    Map<String, Principal> byDigest = new HashMap<>();
    Map<String, Integer> firstIndex = new HashMap<>();
    List<? extends Config> entries = security.hasPath("tokens") ? security.getConfigList("tokens") : List.of();
    for (int i = 0; i < entries.size(); i++) {
      String at = PREFIX + "tokens[" + i + "]";
      Principal principal = principal(entries.get(i), at);
      String token = string(entries.get(i), "token", at).orElseThrow(() -> missing(at + ".token"));
      if (!BearerHeader.isToken(token)) {
        throw new IllegalArgumentException(at + ".token must be RFC 6750 token characters (letters, digits,"
            + " - . _ ~ + / and trailing =), without white space");
      }
      String digest = TokenDigest.of(token);
      Integer first = firstIndex.putIfAbsent(digest, i);
      if (first != null) {
        throw new IllegalArgumentException(at + ".token is the same token as tokens[" + first
            + "].token; a token names one principal");
      }
      byDigest.put(digest, principal);
    }
    return byDigest;
  }

  private static Principal principal(Config entry, String at) {
    String member = string(entry, "principal", at).orElseThrow(() -> missing(at + ".principal"));
    if (!Principal.isMember(member)) {
      throw new IllegalArgumentException(at + ".principal must be an IAM member, type:name"
          + " (user:ana@example.com), was '" + member + "'");
    }
    return new Principal(member);
  }

  private static List<JwtIssuer> issuers(Config security, Path baseDir) {
    List<JwtIssuer> issuers = new ArrayList<>();
    Set<String> seen = new HashSet<>();
    List<? extends Config> entries =
        security.hasPath("jwt.issuers") ? security.getConfigList("jwt.issuers") : List.of();
    for (int i = 0; i < entries.size(); i++) {
      Config entry = entries.get(i);
      String at = PREFIX + "jwt.issuers[" + i + "]";
      String issuer = string(entry, "issuer", at).orElseThrow(() -> missing(at + ".issuer"));
      if (!seen.add(issuer)) {
        throw new IllegalArgumentException(at + ".issuer: " + issuer + " is configured twice");
      }
      List<String> audiences = strings(entry, "audiences", List.of());
      if (audiences.isEmpty()) {
        throw new IllegalArgumentException(at + ".audiences must name at least one aud value tokens carry");
      }
      List<VerificationKey> keys = issuerKeys(entry, at, baseDir);
      String claim = string(entry, "principal-claim", at).orElse("sub");
      String prefix = string(entry, "principal-prefix", at).orElse("user:");
      if (!prefix.isEmpty() && !Principal.isMember(prefix + "x")) {
        throw new IllegalArgumentException(at + ".principal-prefix must be an IAM member type and a colon"
            + " (user:, serviceAccount:, group:) or empty, was '" + prefix + "'");
      }
      try {
        issuers.add(new JwtIssuer(issuer, audiences, keys, claim, prefix));
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException(at + ": " + e.getMessage());
      }
    }
    return issuers;
  }

  private static List<VerificationKey> issuerKeys(Config entry, String at, Path baseDir) {
    Optional<String> jwks = string(entry, "keys", at);
    Optional<String> pem = string(entry, "public-key-pem", at);
    if (jwks.isPresent() == pem.isPresent()) {
      throw new IllegalArgumentException(at + " needs exactly one of keys (a JWK set file) and public-key-pem");
    }
    try {
      return jwks.isPresent()
          ? KeyFiles.jwks(baseDir.resolve(jwks.get()))
          : List.of(VerificationKey.of(KeyFiles.pem(pem.get(), baseDir)));
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(at + (jwks.isPresent() ? ".keys: " : ".public-key-pem: ") + e.getMessage());
    }
  }

  private static List<ServiceAccountKey> serviceAccounts(Config security, Path baseDir) {
    List<ServiceAccountKey> accounts = new ArrayList<>();
    Set<String> seen = new HashSet<>();
    List<ConfigValue> entries = security.hasPath("service-accounts") ? security.getList("service-accounts") : List.of();
    for (int i = 0; i < entries.size(); i++) {
      String at = PREFIX + "service-accounts[" + i + "]";
      ServiceAccountKey account = serviceAccount(entries.get(i), at, baseDir);
      if (!seen.add(account.clientEmail() + " " + account.keyId())) {
        throw new IllegalArgumentException(at + ": key " + account.keyId() + " of " + account.clientEmail()
            + " is configured twice");
      }
      accounts.add(account);
    }
    return accounts;
  }

  private static ServiceAccountKey serviceAccount(ConfigValue value, String at, Path baseDir) {
    if (value.valueType() == ConfigValueType.STRING) {
      try {
        return KeyFiles.serviceAccount(baseDir.resolve((String) value.unwrapped()));
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException(at + ": " + e.getMessage());
      }
    }
    if (value.valueType() != ConfigValueType.OBJECT) {
      throw new IllegalArgumentException(at + " must be a key file's name or {client-email, key-id, public-key-pem}");
    }
    Config entry = ((ConfigObject) value).toConfig();
    String email = string(entry, "client-email", at).orElseThrow(() -> missing(at + ".client-email"));
    String keyId = string(entry, "key-id", at).orElseThrow(() -> missing(at + ".key-id"));
    String pem = string(entry, "public-key-pem", at).orElseThrow(() -> missing(at + ".public-key-pem"));
    PublicKey key;
    try {
      key = KeyFiles.pem(pem, baseDir);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(at + ".public-key-pem: " + e.getMessage());
    }
    if (!(key instanceof RSAPublicKey rsa)) {
      throw new IllegalArgumentException(at + ".public-key-pem: a service account's key is an RSA key");
    }
    try {
      return new ServiceAccountKey(email, keyId, rsa);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(at + ": " + e.getMessage());
    }
  }

  private static Optional<String> string(Config entry, String name, String at) {
    if (!entry.hasPath(name)) {
      return Optional.empty();
    }
    try {
      return Optional.of(entry.getString(name));
    } catch (ConfigException.WrongType e) {
      throw new IllegalArgumentException(at + "." + name + " must be a string");
    }
  }

  private static List<String> strings(Config config, String name, List<String> byDefault) {
    return config.hasPath(name) ? List.copyOf(config.getStringList(name)) : byDefault;
  }

  private static IllegalArgumentException missing(String key) {
    return new IllegalArgumentException(key + " is missing");
  }
}
