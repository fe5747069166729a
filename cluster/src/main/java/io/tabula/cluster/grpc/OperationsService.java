package io.tabula.cluster.grpc;

import com.google.bigtable.admin.v2.Backup;
import com.google.bigtable.admin.v2.BackupInfo;
import com.google.bigtable.admin.v2.CopyBackupMetadata;
import com.google.bigtable.admin.v2.CreateBackupMetadata;
import com.google.bigtable.admin.v2.RestoreTableMetadata;
import com.google.bigtable.admin.v2.UpdateTableMetadata;
import com.google.longrunning.CancelOperationRequest;
import com.google.longrunning.DeleteOperationRequest;
import com.google.longrunning.GetOperationRequest;
import com.google.longrunning.ListOperationsRequest;
import com.google.longrunning.ListOperationsResponse;
import com.google.longrunning.Operation;
import com.google.longrunning.Operations;
import com.google.longrunning.WaitOperationRequest;
import com.google.protobuf.Any;
import com.google.protobuf.Empty;
import com.google.protobuf.Message;
import io.tabula.cluster.routing.Router;
import io.tabula.persistence.backup.BackupManifestCodec;
import io.tabula.persistence.storage.Storage;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * {@code google.longrunning.Operations} for the operations the table-admin API answers
 * ({@code CreateBackup}, {@code RestoreTable}, {@code UpdateTable}): each is done when it is
 * answered, so an operation is what its name says about a backup or a table that exists now,
 * read again when asked. An operation whose backup or table is gone is NOT_FOUND, as one never
 * made. Cancelling or deleting one changes nothing (it is done); waiting for one answers it.
 * Stateless; thread-safe.
 */
final class OperationsService implements Operations {
  /** A backup's operation: its making, or its copying when it is a copy (it names its source then). */
  private static final Pattern BACKUP_CREATE = Pattern.compile("(.+/backups/[^/]+)/operations/(create|copy)");
  private static final Pattern TABLE_OP = Pattern.compile("(projects/[^/]+/instances/[^/]+)/tables/([^/]+)"
      + "/operations/(restore|update-[0-9]+)");

  private final BackupService backups;
  private final Router router;
  private final Storage storage;
  private final Executor blockingIo;

  OperationsService(BackupService backups, Router router, Storage storage, Executor blockingIo) {
    this.backups = backups;
    this.router = router;
    this.storage = storage;
    this.blockingIo = blockingIo;
  }

  @Override
  public CompletionStage<Operation> getOperation(GetOperationRequest in) {
    return GrpcErrors.unary(() -> operation(in.getName()));
  }

  @Override
  public CompletionStage<Operation> waitOperation(WaitOperationRequest in) {
    return GrpcErrors.unary(() -> operation(in.getName()));
  }

  @Override
  public CompletionStage<Empty> cancelOperation(CancelOperationRequest in) {
    return GrpcErrors.unary(() -> operation(in.getName()).thenApply(done -> Empty.getDefaultInstance()));
  }

  @Override
  public CompletionStage<Empty> deleteOperation(DeleteOperationRequest in) {
    return GrpcErrors.unary(() -> operation(in.getName()).thenApply(done -> Empty.getDefaultInstance()));
  }

  /**
   * The create operations of the backups whose names start with {@code name} (an instance's,
   * a cluster's or a backup's), by backup id; one page. Filters are not offered.
   */
  @Override
  public CompletionStage<ListOperationsResponse> listOperations(ListOperationsRequest in) {
    return GrpcErrors.unary(() -> {
      if (!in.getFilter().isEmpty()) {
        throw GrpcErrors.invalid("filter", "is not supported: list without one");
      }
      if (!in.getPageToken().isEmpty()) {
        throw GrpcErrors.invalid("page_token", "not a page token this node gave (every list here fits one page)");
      }
      Matcher instance = Pattern.compile("(projects/[^/]+/instances/[^/]+)(/.*)?").matcher(in.getName());
      if (!instance.matches()) {
        throw GrpcErrors.invalid("name", "'" + in.getName() + "' is not an instance, cluster or backup name");
      }
      return onIo(() -> {
        List<Operation> out = new ArrayList<>();
        for (String id : BackupManifestCodec.ids(storage)) {
          BackupService.Name backup = new BackupService.Name(instance.group(1), backups.clusterId(), id);
          if (backup.full().startsWith(in.getName())) {
            try {
              out.add(created(backups.read(backup)));
            } catch (org.apache.pekko.grpc.GrpcServiceException gone) {
              // deleted between the listing and the read
            }
          }
        }
        return ListOperationsResponse.newBuilder().addAllOperations(out).build();
      });
    });
  }

  private CompletionStage<Operation> operation(String name) {
    Matcher b = BACKUP_CREATE.matcher(name);
    if (b.matches()) {
      BackupService.Name backup = backups.name("name", b.group(1));
      boolean copy = b.group(2).equals("copy");
      return onIo(() -> {
        Operation op = created(backups.read(backup));
        if (!op.getName().equals(name)) { // a copy asked as made, or a backup made asked as copied
          throw GrpcErrors.notFound("operation " + name + " not found: backup " + backup.full() + " was "
              + (copy ? "made from its table" : "copied"));
        }
        return op;
      });
    }
    Matcher t = TABLE_OP.matcher(name);
    if (t.matches()) {
      String table = Names.checkTableId("name", t.group(2));
      return router.table(table).handle((info, err) -> {
        if (err != null) {
          boolean gone = io.tabula.protocol.errors.Refusal.in(err).map(r -> r.code()
              == io.tabula.protocol.errors.ErrorCode.NOT_FOUND).orElse(false);
          if (gone) {
            throw GrpcErrors.notFound("operation " + name + " not found: its table is gone");
          }
          throw GrpcErrors.from(err); // the master did not answer, say: the client asks again
        }
        String tableName = Names.tableName(t.group(1), table);
        Message metadata = t.group(3).equals("restore")
            ? RestoreTableMetadata.newBuilder().setName(tableName).build()
            : UpdateTableMetadata.newBuilder().setName(tableName).build();
        return done(name, metadata, AdminService.toProto(t.group(1), info, true));
      });
    }
    throw GrpcErrors.notFound("operation " + name + " not found");
  }

  /** The operation that made backup {@code b}: a CopyBackup's for a copy, a CreateBackup's otherwise. */
  private static Operation created(Backup b) {
    if (!b.getSourceBackup().isEmpty()) {
      return done(b.getName() + "/operations/copy", CopyBackupMetadata.newBuilder().setName(b.getName())
          .setSourceBackupInfo(BackupInfo.newBuilder().setBackup(b.getSourceBackup()).setSourceTable(
              b.getSourceTable()).setStartTime(b.getStartTime()).setEndTime(b.getEndTime())).build(), b);
    }
    return done(b.getName() + "/operations/create", CreateBackupMetadata.newBuilder().setName(b.getName())
        .setSourceTable(b.getSourceTable()).setStartTime(b.getStartTime()).setEndTime(b.getEndTime()).build(), b);
  }

  private static Operation done(String name, Message metadata, Message response) {
    return Operation.newBuilder().setName(name).setMetadata(Any.pack(metadata)).setDone(true)
        .setResponse(Any.pack(response)).build();
  }

  private <T> CompletionStage<T> onIo(BackupService.IoWork<T> work) {
    return BackupService.onIo(blockingIo, work);
  }
}
