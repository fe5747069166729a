package io.tabula.protocol.errors;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.Any;
import com.google.rpc.BadRequest;
import com.google.rpc.ErrorInfo;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletionException;
import org.junit.jupiter.api.Test;

class ErrorDetailsTest {
  @Test
  void reasonAndDelayRoundTripThroughTheTrailerBytes() {
    com.google.rpc.Status s = ErrorDetails.of(ErrorCode.MOVED, "tablet t-1 has split", null, Duration.ofMillis(250));
    com.google.rpc.Status back = ErrorDetails.parse(s.toByteArray()).orElseThrow();
    assertEquals(io.grpc.Status.Code.UNAVAILABLE.value(), back.getCode());
    assertEquals(Optional.of(ErrorCode.MOVED), ErrorDetails.reason(back));
    assertEquals(Optional.of(Duration.ofMillis(250)), ErrorDetails.retryDelay(back));
  }

  @Test
  void aBadRequestNamesItsField() throws Exception {
    com.google.rpc.Status s = ErrorDetails.of(ErrorCode.INVALID_ARGUMENT, "rules[0].family_name: too long",
        "rules[0].family_name", null);
    assertEquals(Optional.empty(), ErrorDetails.retryDelay(s));
    BadRequest bad = s.getDetailsList().stream().filter(a -> a.is(BadRequest.class)).findFirst().orElseThrow()
        .unpack(BadRequest.class);
    assertEquals("rules[0].family_name", bad.getFieldViolations(0).getField());
  }

  @Test
  void reasonsOfOtherDomainsOrUnknownNamesAreNotTabulas() {
    com.google.rpc.Status foreign = com.google.rpc.Status.newBuilder().setCode(14).addDetails(Any.pack(
        ErrorInfo.newBuilder().setDomain("bigtable.googleapis.com").setReason("MOVED").build())).build();
    assertEquals(Optional.empty(), ErrorDetails.reason(foreign));
    com.google.rpc.Status unknown = com.google.rpc.Status.newBuilder().setCode(14).addDetails(Any.pack(
        ErrorInfo.newBuilder().setDomain(ErrorDetails.DOMAIN).setReason("SOMETHING_NEWER").build())).build();
    assertEquals(Optional.empty(), ErrorDetails.reason(unknown));
    assertTrue(ErrorDetails.parse(new byte[] {(byte) 0xff, 0x01}).isEmpty());
  }

  @Test
  void aRefusalIsFoundThroughFutureWrappersAndOnlyThere() {
    Refusal r = Refusal.of(ErrorCode.NOT_FOUND, "table t not found");
    assertEquals(Optional.of(r), Refusal.in(new CompletionException(r.exception())));
    assertTrue(Refusal.is(r.exception(), ErrorCode.NOT_FOUND));
    assertEquals(Optional.empty(), Refusal.in(new IllegalStateException("NOT_FOUND: table t not found")));
  }
}
