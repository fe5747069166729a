package io.tabula.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.Any;
import com.google.rpc.ErrorInfo;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.tabula.protocol.errors.ErrorCode;
import io.tabula.protocol.errors.ErrorDetails;
import io.tabula.protocol.errors.WireNames;
import java.io.IOException;
import java.net.ConnectException;
import java.net.UnknownHostException;
import java.security.cert.CertificateException;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletionException;
import javax.net.ssl.SSLHandshakeException;
import org.apache.pekko.grpc.internal.ClientConnectionException;
import org.junit.jupiter.api.Test;

/**
 * What the client reads from a failed call: the code, the description whole, Tabula's reason
 * and retry delay from the status details, a stale route from the trailer or the reason, and
 * a node it could not reach from the exception types. Never from the text.
 */
class FailuresTest {
  private static final Metadata.Key<byte[]> DETAILS = Metadata.Key.of(WireNames.STATUS_DETAILS_TRAILER,
      Metadata.BINARY_BYTE_MARSHALLER);

  @Test
  void theReasonAndDelayComeFromTheStatusDetails() {
    TabulaException e = Failures.of(new CompletionException(RetrierTest.refusal(ErrorCode.UNAVAILABLE,
        "tablet t1 is moving", Duration.ofMillis(250))));
    assertEquals(Status.Code.UNAVAILABLE, e.code());
    assertEquals("tablet t1 is moving", e.description());
    assertEquals("UNAVAILABLE: tablet t1 is moving", e.getMessage());
    assertEquals(Optional.of(ErrorCode.UNAVAILABLE), e.reason());
    assertEquals(Optional.of(Duration.ofMillis(250)), e.retryDelay());
    assertFalse(e.isConnectionFailure(), "the node answered");
    assertSame(e, Failures.of(new CompletionException(e)), "an exception already made is passed on");
  }

  @Test
  void detailsOfAnotherDomainOrUnreadableOnesGiveNoReason() {
    Metadata other = new Metadata();
    other.put(DETAILS, com.google.rpc.Status.newBuilder().setCode(Status.Code.FAILED_PRECONDITION.value())
        .addDetails(Any.pack(ErrorInfo.newBuilder().setDomain("example.com").setReason("STALE_ROUTE").build()))
        .build().toByteArray());
    assertEquals(Optional.empty(), Failures.of(Status.FAILED_PRECONDITION.asRuntimeException(other)).reason());
    assertFalse(Failures.isStaleRoute(Status.FAILED_PRECONDITION.asRuntimeException(other)));

    Metadata garbage = new Metadata();
    garbage.put(DETAILS, new byte[] {(byte) 0xff, 0x01, 0x02});
    TabulaException e = Failures.of(Status.INTERNAL.withDescription("boom").asRuntimeException(garbage));
    assertEquals(Optional.empty(), e.reason());
    assertEquals("boom", e.description());
  }

  @Test
  void aStaleRouteIsTheTrailerOrTheReasonNeverTheText() {
    Metadata trailer = new Metadata();
    trailer.put(Metadata.Key.of(WireNames.STALE_ROUTE_TRAILER, Metadata.ASCII_STRING_MARSHALLER), "1");
    assertTrue(Failures.isStaleRoute(Status.FAILED_PRECONDITION.withDescription("moved").asRuntimeException(trailer)));
    assertTrue(Failures.isStaleRoute(new CompletionException(RetrierTest.refusal(ErrorCode.STALE_ROUTE, "split",
        null))));
    assertFalse(Failures.isStaleRoute(Status.FAILED_PRECONDITION.withDescription("stale route: tablet t1 split")
        .asRuntimeException()));
    assertFalse(Failures.isStaleRoute(Status.UNAVAILABLE.asRuntimeException(trailer)),
        "the trailer counts on the stale route's own code only");
  }

  @Test
  void aNodeThatCannotBeReachedIsToldByTheExceptionTypes() {
    assertTrue(Failures.of(Status.UNAVAILABLE.withDescription("io exception")
        .withCause(new ConnectException("Connection refused")).asRuntimeException()).isConnectionFailure());
    assertTrue(Failures.of(Status.UNAVAILABLE.withDescription("Unable to resolve host nohost")
        .withCause(new IllegalStateException("resolver", new UnknownHostException("nohost"))).asRuntimeException())
        .isConnectionFailure(), "a cause anywhere in the chain");
    assertTrue(Failures.of(new CompletionException(new ClientConnectionException("gave up connecting")))
        .isConnectionFailure());

    assertFalse(Failures.of(Status.UNAVAILABLE.withDescription("io exception").asRuntimeException())
        .isConnectionFailure(), "the words alone say nothing");
    assertFalse(Failures.of(RetrierTest.refusal(ErrorCode.UNAVAILABLE, "shutting down", null))
        .isConnectionFailure(), "a node that answers UNAVAILABLE was reached");
    assertFalse(Failures.of(Status.INTERNAL.withCause(new IOException("disk")).asRuntimeException())
        .isConnectionFailure(), "only an UNAVAILABLE call is one that did not connect");

    // grpc-java's own answer when the connection closes as a call starts (a node being killed).
    TabulaException closed = Failures.of(Status.UNKNOWN.withDescription("channel closed")
        .withCause(new java.nio.channels.ClosedChannelException()).asRuntimeException());
    assertEquals(Status.Code.UNAVAILABLE, closed.code());
    assertTrue(closed.isConnectionFailure() && closed.isRetryable(), closed::toString);
    assertEquals(Status.Code.UNKNOWN, Failures.of(Status.UNKNOWN.withDescription("channel closed")
        .asRuntimeException()).code(), "an UNKNOWN without an I/O cause stays what it is");

    TabulaException after = Failures.of(Status.UNAVAILABLE.withCause(new ConnectException()).asRuntimeException())
        .withDescription("io exception (after 3 attempts)");
    assertTrue(after.isConnectionFailure(), "kept by a new description");
  }

  /** A TLS handshake that failed on the node's certificate: a connection failure no retry cures. */
  @Test
  void aRejectedCertificateIsToldByTheCauseTypeAndNotRetried() {
    SSLHandshakeException handshake = new SSLHandshakeException("PKIX path building failed");
    handshake.initCause(new CertificateException("unable to find valid certification path"));
    TabulaException e = Failures.of(Status.UNAVAILABLE.withDescription("io exception").withCause(handshake)
        .asRuntimeException());
    assertTrue(e.isCertificateRejected(), e::toString);
    assertTrue(e.isConnectionFailure(), "the request never reached the node");
    assertFalse(e.isRetryable(), "the same certificate would be met again");
    assertEquals(Status.Code.UNAVAILABLE, e.code());
    assertTrue(e.description().contains("unable to find valid certification path"), e.description());
    assertTrue(e.withDescription("elsewhere").isCertificateRejected(), "kept by a new description");

    TabulaException dropped = Failures.of(Status.UNAVAILABLE.withCause(new SSLHandshakeException(
        "Remote host terminated the handshake")).asRuntimeException());
    assertFalse(dropped.isCertificateRejected(), "a handshake cut short is a lost connection, retried");
    assertTrue(dropped.isConnectionFailure() && dropped.isRetryable(), dropped::toString);
  }

  @Test
  void aMutateRowsEntryStatusCarriesItsDetails() {
    TabulaException e = Failures.ofEntry(ErrorDetails.of(ErrorCode.RESOURCE_EXHAUSTED, "node overloaded", null,
        Duration.ofSeconds(1)));
    assertEquals(Status.Code.RESOURCE_EXHAUSTED, e.code());
    assertEquals("node overloaded", e.description());
    assertEquals(Optional.of(ErrorCode.RESOURCE_EXHAUSTED), e.reason());
    assertEquals(Optional.of(Duration.ofSeconds(1)), e.retryDelay());
    assertEquals("NOT_FOUND", Failures.ofEntry(com.google.rpc.Status.newBuilder()
        .setCode(Status.Code.NOT_FOUND.value()).build()).description());
  }
}
