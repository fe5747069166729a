package io.tabula.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.Attributes;
import io.grpc.CallCredentials;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.SecurityLevel;
import io.grpc.Status;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * A token as the builder takes it and a call sends it: refused with a message that never
 * shows it when an HTTP header could not carry it, never in {@code toString}, and put on a
 * call only over TLS or to a loopback address.
 */
class BearerTokenTest {
  private static final String SECRET = "s3cret-Token_0123.~+/=";

  @Test
  void aTokenAnHttpHeaderCannotCarryIsRefusedWithoutShowingIt() {
    for (String bad : new String[] {SECRET + "\n", SECRET + " x", "\t" + SECRET, SECRET + "\u00e9", SECRET + "\u0000",
        SECRET + "\u007f"}) {
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> TabulaClient.builder()
          .token(bad), bad);
      assertFalse(e.getMessage().contains(SECRET), e.getMessage());
      assertTrue(e.getMessage().contains("at character"), e.getMessage());
    }
    IllegalArgumentException newline = assertThrows(IllegalArgumentException.class, () -> BearerToken.of(SECRET
        + "\n"));
    assertEquals("the token has white space, which would end it in the authorization header (a line break read"
        + " from a file with it?) (U+000A at character 23 of 23; the token itself is not shown)", newline.getMessage());
    assertEquals("the token is empty", assertThrows(IllegalArgumentException.class, () -> BearerToken.of(""))
        .getMessage());
  }

  @Test
  void aGoodTokenIsSentAsBearerAndNeverShown() {
    BearerToken t = BearerToken.of(SECRET);
    assertEquals("Bearer " + SECRET, t.authorization());
    assertFalse(t.toString().contains(SECRET), t.toString());
  }

  @Test
  void onlyLoopbackAddressesMayGetATokenWithoutTls() {
    for (String local : new String[] {"localhost", "LOCALHOST:8086", "127.0.0.1:8086", "127.1.2.3", "[::1]:8086",
        "::1"}) {
      assertTrue(BearerToken.mayTravelInPlaintextTo(local), local);
    }
    for (String remote : new String[] {"10.0.0.5:8086", "node1:8086", "localhost.example.com:1", "127.0.0.1.nip.io",
        "[2001:db8::1]:8086", "", "128.0.0.1"}) {
      assertFalse(BearerToken.mayTravelInPlaintextTo(remote), remote);
    }
    assertFalse(BearerToken.mayTravelInPlaintextTo(null));
  }

  /** What the call credentials do with a call, as grpc-java asks them. */
  @Test
  void theCredentialsPutTheHeaderOnlyOverTlsOrOnLoopback() {
    TokenCredentials credentials = new TokenCredentials(BearerToken.of(SECRET));
    assertEquals("Bearer " + SECRET, apply(credentials, SecurityLevel.PRIVACY_AND_INTEGRITY, "node1:8086"));
    assertEquals("Bearer " + SECRET, apply(credentials, SecurityLevel.NONE, "127.0.0.1:8086"));
    Status refused = assertThrows(RefusedException.class, () -> apply(credentials, SecurityLevel.NONE,
        "node1:8086")).status;
    assertEquals(Status.Code.UNAUTHENTICATED, refused.getCode());
    assertTrue(refused.getDescription().contains("node1:8086"), refused.getDescription());
    assertFalse(refused.getDescription().contains(SECRET), refused.getDescription());
  }

  private static final class RefusedException extends RuntimeException {
    private static final long serialVersionUID = 1L;
    final transient Status status;

    RefusedException(Status status) {
      this.status = status;
    }
  }

  /** The authorization header the credentials put on a call at {@code level} to {@code authority}. */
  private static String apply(CallCredentials credentials, SecurityLevel level, String authority) {
    AtomicReference<String> header = new AtomicReference<>();
    AtomicReference<Status> failed = new AtomicReference<>();
    credentials.applyRequestMetadata(new CallCredentials.RequestInfo() {
      @Override
      public MethodDescriptor<?, ?> getMethodDescriptor() {
        return DirectCalls.MUTATE_ROW;
      }

      @Override
      public SecurityLevel getSecurityLevel() {
        return level;
      }

      @Override
      public String getAuthority() {
        return authority;
      }

      @Override
      public Attributes getTransportAttrs() {
        return Attributes.EMPTY;
      }
    }, Runnable::run, new CallCredentials.MetadataApplier() {
      @Override
      public void apply(Metadata headers) {
        header.set(headers.get(Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER)));
      }

      @Override
      public void fail(Status status) {
        failed.set(status);
      }
    });
    if (failed.get() != null) {
      throw new RefusedException(failed.get());
    }
    return header.get();
  }
}
