package io.tabula.cluster.grpc;

import com.google.iam.v1.Binding;
import com.google.iam.v1.GetIamPolicyRequest;
import com.google.iam.v1.Policy;
import com.google.iam.v1.SetIamPolicyRequest;
import com.google.protobuf.ByteString;
import io.tabula.persistence.backup.BackupManifest;
import io.tabula.persistence.backup.BackupManifestCodec;
import io.tabula.persistence.backup.BackupPolicy;
import io.tabula.persistence.storage.Storage;
import io.tabula.protocol.errors.ErrorCode;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;

/**
 * The IAM policies of backups ({@code GetIamPolicy} and {@code SetIamPolicy} on {@code
 * projects/*&#47;instances/*&#47;clusters/*&#47;backups/*}; {@code TestIamPermissions} is answered in
 * front of the services, docs/security.md): kept beside the backup in versioned files ({@link
 * BackupPolicy}), gone with it. A policy's etag is the backup's start time and the policy's
 * version, so a change made against an older policy, or against an earlier backup of the same
 * id, is ABORTED. Roles and members are checked as tables' are ({@link AccessService#bindings}).
 * Stateless; storage I/O on the blocking-I/O executor.
 */
final class BackupPolicies {
  private final BackupService backups;
  private final Storage storage;
  private final Executor blockingIo;

  BackupPolicies(BackupService backups, Storage storage, Executor blockingIo) {
    this.backups = backups;
    this.storage = storage;
    this.blockingIo = blockingIo;
  }

  /** Whether {@code resource} names a backup (else a table or a view). */
  static boolean names(String resource) {
    return resource.contains("/backups/");
  }

  CompletionStage<Policy> get(GetIamPolicyRequest in) {
    return GrpcErrors.unary(() -> {
      BackupService.Name name = backups.name("resource", in.getResource());
      return BackupService.onIo(blockingIo, () -> {
        BackupManifest m = backups.manifest(name);
        return policy(BackupPolicy.read(storage, name.id()), m.startMicros());
      });
    });
  }

  CompletionStage<Policy> set(SetIamPolicyRequest in) {
    return GrpcErrors.unary(() -> {
      BackupService.Name name = backups.name("resource", in.getResource());
      Map<String, List<String>> bindings = AccessService.bindings(in.getPolicy());
      ByteString etag = in.getPolicy().getEtag();
      return BackupService.onIo(blockingIo, () -> {
        BackupManifest m = backups.manifest(name);
        BackupPolicy.Versioned now = BackupPolicy.read(storage, name.id());
        if (!etag.isEmpty() && version(etag, m.startMicros()) != now.version()) {
          throw GrpcErrors.status(ErrorCode.ABORTED, "policy.etag: the backup's policy was changed since this etag"
              + " was read: read the policy again", "policy.etag");
        }
        BackupPolicy next = new BackupPolicy(bindings);
        if (!BackupPolicy.write(storage, name.id(), now.version() + 1, next)) {
          throw GrpcErrors.status(ErrorCode.ABORTED, "the policy of backup " + name.full() + " was changed by"
              + " another call meanwhile: read it again", "policy.etag");
        }
        if (!storage.exists(BackupManifestCodec.path(name.id()))) {
          BackupService.delete(storage, name.id()); // deleted meanwhile: the change must not leave a folder behind
          throw GrpcErrors.notFound("backup " + name.full() + " not found (deleted meanwhile)");
        }
        return policy(new BackupPolicy.Versioned(now.version() + 1, next), m.startMicros());
      });
    });
  }

  /**
   * The bindings of backup {@code id}'s policy, for the guard (members by role; none for a
   * backup without a policy, or an id no backup can have). Blocks on storage.
   *
   * @throws UncheckedIOException if the policy cannot be read
   */
  static Map<String, List<String>> bindings(Storage storage, String id) {
    if (!BackupService.validId(id)) {
      return Map.of();
    }
    try {
      return BackupPolicy.read(storage, id).policy().bindings();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static Policy policy(BackupPolicy.Versioned v, long backupStarted) {
    Policy.Builder p = Policy.newBuilder().setVersion(1).setEtag(ByteString.copyFromUtf8(backupStarted + "."
        + v.version()));
    v.policy().bindings().forEach((role, members) -> p.addBindings(Binding.newBuilder().setRole(role)
        .addAllMembers(members)));
    return p.build();
  }

  /** The version an etag names; ABORTED for one of an earlier backup of the same id, INVALID_ARGUMENT for no etag of ours. */
  private static long version(ByteString etag, long backupStarted) {
    String text = etag.toStringUtf8();
    int dot = text.indexOf('.');
    try {
      if (dot > 0) {
        long started = Long.parseLong(text.substring(0, dot));
        long version = Long.parseLong(text.substring(dot + 1));
        if (version >= 0) {
          if (started != backupStarted) {
            throw GrpcErrors.status(ErrorCode.ABORTED, "policy.etag: the backup was deleted and made again since"
                + " this etag was read: read the policy again", "policy.etag");
          }
          return version;
        }
      }
    } catch (NumberFormatException e) {
      // refused below
    }
    throw GrpcErrors.invalid("policy.etag", "is not an etag this node gave (send back the one the last read"
        + " returned)");
  }
}
