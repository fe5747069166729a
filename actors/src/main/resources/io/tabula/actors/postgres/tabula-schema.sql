-- Tabula's tables in PostgreSQL 14 or later (docs/deploy.md): the master's journal and snapshots in the
-- shape pekko-persistence-jdbc writes them, the leases, and the fence that keeps a master
-- which lost its lease from writing to the journal. A node runs this at start, in one
-- transaction under an advisory lock (so nodes starting together do not race), and every
-- statement is idempotent. An operator who creates schemas by hand runs it with
-- `bin/tabula postgres-schema | psql -v ON_ERROR_STOP=1 -d tabula`.

CREATE TABLE IF NOT EXISTS event_journal (
  ordering BIGSERIAL,
  persistence_id VARCHAR(255) NOT NULL,
  sequence_number BIGINT NOT NULL,
  deleted BOOLEAN DEFAULT FALSE NOT NULL,
  writer VARCHAR(255) NOT NULL,
  write_timestamp BIGINT,
  adapter_manifest VARCHAR(255),
  event_ser_id INTEGER NOT NULL,
  event_ser_manifest VARCHAR(255) NOT NULL,
  event_payload BYTEA NOT NULL,
  meta_ser_id INTEGER,
  meta_ser_manifest VARCHAR(255),
  meta_payload BYTEA,
  PRIMARY KEY (persistence_id, sequence_number)
);
CREATE UNIQUE INDEX IF NOT EXISTS event_journal_ordering_idx ON event_journal (ordering);

CREATE TABLE IF NOT EXISTS event_tag (
  event_id BIGINT,
  tag VARCHAR(256),
  PRIMARY KEY (event_id, tag),
  CONSTRAINT fk_event_journal FOREIGN KEY (event_id) REFERENCES event_journal (ordering) ON DELETE CASCADE
);

CREATE TABLE IF NOT EXISTS snapshot (
  persistence_id VARCHAR(255) NOT NULL,
  sequence_number BIGINT NOT NULL,
  created BIGINT NOT NULL,
  snapshot_ser_id INTEGER NOT NULL,
  snapshot_ser_manifest VARCHAR(255) NOT NULL,
  snapshot_payload BYTEA NOT NULL,
  meta_ser_id INTEGER,
  meta_ser_manifest VARCHAR(255),
  meta_payload BYTEA,
  PRIMARY KEY (persistence_id, sequence_number)
);

-- One row per lease (PostgresLease). Each taking is a new generation; expires_at is judged by
-- the database's clock only; holder_pid is the holder's database session, so a holder whose
-- process died (its session ended with its connection) is replaced without waiting.
CREATE TABLE IF NOT EXISTS tabula_lease (
  name TEXT PRIMARY KEY,
  owner TEXT NOT NULL,
  generation BIGINT NOT NULL,
  expires_at TIMESTAMPTZ NOT NULL,
  holder_pid INTEGER,
  released BOOLEAN NOT NULL DEFAULT FALSE,
  taken_at TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp()
);

-- The fence (docs/fencing.md). A node's journal connections name the lease and the owner they
-- write for (tabula.lease, tabula.owner, set when the connection opens). A change to the
-- journal is refused unless that owner holds that lease now; the row lock it takes on the
-- lease (FOR SHARE) makes a change and a taking of the lease happen one after the other, so a
-- new holder that reads the journal after taking the lease sees every change the old holder
-- made, and the old holder can make none after. Connections that name no lease (tools) are
-- not fenced.
CREATE OR REPLACE FUNCTION tabula_fence_journal() RETURNS trigger LANGUAGE plpgsql AS $fence$
DECLARE
  v_lease TEXT := current_setting('tabula.lease', true);
  v_owner TEXT := current_setting('tabula.owner', true);
BEGIN
  IF COALESCE(v_lease, '') = '' THEN
    RETURN COALESCE(NEW, OLD);
  END IF;
  PERFORM 1 FROM tabula_lease l WHERE l.name = v_lease AND l.owner = v_owner AND NOT l.released FOR SHARE;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'tabula: % does not hold the lease %, so it may not change the journal', v_owner, v_lease
      USING ERRCODE = 'TB001', HINT = 'a newer master took over; this node stops acting as master';
  END IF;
  RETURN COALESCE(NEW, OLD);
END
$fence$;

CREATE OR REPLACE TRIGGER tabula_fence BEFORE INSERT OR UPDATE OR DELETE ON event_journal
  FOR EACH ROW EXECUTE FUNCTION tabula_fence_journal();
CREATE OR REPLACE TRIGGER tabula_fence BEFORE INSERT OR UPDATE OR DELETE ON snapshot
  FOR EACH ROW EXECUTE FUNCTION tabula_fence_journal();
