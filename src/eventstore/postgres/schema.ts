import type pg from 'pg';

/**
 * The event log. `transaction_id` (xid8) plus `position` give the gap-free global order: readers only return
 * rows below the oldest transaction still running, so an event that commits late is never skipped.
 */
export const EVENT_STORE_DDL = `
CREATE TABLE IF NOT EXISTS events (
  position bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  transaction_id xid8 NOT NULL DEFAULT pg_current_xact_id(),
  id uuid NOT NULL,
  stream text NOT NULL,
  revision bigint NOT NULL,
  type text NOT NULL,
  data jsonb NOT NULL,
  metadata jsonb NOT NULL,
  occurred_at timestamptz NOT NULL,
  prev_hash text NOT NULL,
  hash text NOT NULL
);
CREATE UNIQUE INDEX IF NOT EXISTS events_id ON events (id);
CREATE UNIQUE INDEX IF NOT EXISTS events_stream_revision ON events (stream, revision);
CREATE INDEX IF NOT EXISTS events_global_order ON events (transaction_id, position);
CREATE TABLE IF NOT EXISTS streams (
  stream text PRIMARY KEY,
  revision bigint NOT NULL DEFAULT -1,
  hash text NOT NULL
);
`;

/**
 * One append batch in one statement (see write-batch.ts, which computes the arguments and maps the outcomes).
 * Run as a statement of its own it is its own transaction: locks, checks, inserts and the stream heads in one
 * round trip. Every statement inside takes a new snapshot, so what was read after a lock was granted includes
 * the commit of the writer that held it.
 *
 * Per append (`p_streams[i]`, `p_expected[i]`, and the next `p_counts[i]` events of the event arrays) it
 * returns one row, in order: `appended` or `stored` (an idempotent re-append: the stored last event) with the
 * last revision and its position and transaction id; `empty` (no events) with the stream's revision;
 * `wrong_expected_revision` with the stream's revision; `duplicate_id` with the clashing id. A refused append
 * fails alone and never aborts the statement.
 *
 * The hash chain: an event's hash is SHA-256 over the previous hash, a newline and the event's canonical JSON,
 * whose only part unknown before the stream is locked is the revision. The caller sends the canonical JSON
 * around it (`p_hash_heads[j]` ends with `"revision":`, `p_hash_tails[j]` follows the number), so the bytes
 * hashed here are the ones `chainHash` hashes.
 *
 * The name carries a version: a changed function gets a new name, so a process of the previous version still
 * running against the same schema keeps calling the one it knows.
 */
export const EVENT_STORE_FUNCTIONS = `
CREATE OR REPLACE FUNCTION event_store_append_v1(
  p_streams text[],
  p_expected text[],
  p_counts integer[],
  p_ids uuid[],
  p_types text[],
  p_data jsonb[],
  p_metadata jsonb[],
  p_occurred_at timestamptz[],
  p_hash_heads text[],
  p_hash_tails text[],
  p_channel text
) RETURNS TABLE (out_status text, out_revision bigint, out_position bigint, out_transaction text, out_detail text)
LANGUAGE plpgsql VOLATILE
-- Every table access below is by key. The statements' plans are cached for the session, typically while the
-- tables are still small, where a sequential scan would look cheaper and then stay: forbid it. Without JIT,
-- which a plan costed with a disabled scan could otherwise trigger.
SET enable_seqscan = off
SET jit = off
AS $fn$
DECLARE
  v_requests integer := coalesce(array_length(p_streams, 1), 0);
  v_events integer := coalesce(array_length(p_ids, 1), 0);
  -- The batch's streams in lock order, and each one's head as the batch advances it.
  v_streams text[];
  v_revs bigint[];
  v_hashes text[];
  v_touched boolean[];
  v_stream text;
  -- Some id is stored already or repeats within the batch: look ids up, and insert, append by append.
  v_careful boolean;
  v_first integer := 1;
  v_last integer;
  v_count integer;
  v_from integer := 1;
  v_pending boolean := false;
  v_stored boolean := false;
  v_ok boolean;
  v_rev bigint;
  v_hash text;
  k integer;
  -- Stored events with the ids of one append, in the append's order.
  h_hits integer;
  h_streams text[];
  h_revs bigint[];
  h_pos bigint[];
  h_xids text[];
  -- Rows to insert, by event (null: not inserted).
  e_stream text[] := array_fill(NULL::text, ARRAY[v_events]);
  e_rev bigint[] := array_fill(NULL::bigint, ARRAY[v_events]);
  e_prev text[] := array_fill(NULL::text, ARRAY[v_events]);
  e_hash text[] := array_fill(NULL::text, ARRAY[v_events]);
  e_req integer[] := array_fill(NULL::integer, ARRAY[v_events]);
  -- What was inserted: event index, position, transaction id.
  f_x bigint[];
  f_pos bigint[];
  f_xid text[];
  -- Outcomes, by append.
  r_status text[] := array_fill(NULL::text, ARRAY[v_requests]);
  r_rev bigint[] := array_fill(NULL::bigint, ARRAY[v_requests]);
  r_pos bigint[] := array_fill(NULL::bigint, ARRAY[v_requests]);
  r_xid text[] := array_fill(NULL::text, ARRAY[v_requests]);
  r_detail text[] := array_fill(NULL::text, ARRAY[v_requests]);
BEGIN
  IF v_requests = 0 THEN
    RETURN;
  END IF;
  SELECT array_agg(DISTINCT u.s ORDER BY u.s) INTO v_streams FROM unnest(p_streams) AS u(s);
  -- Per-stream advisory locks in name order, before anything is written: writers of a stream are serialized
  -- without this transaction having an id yet, so the id it gets at its first insert is newer than every
  -- earlier writer's of these streams, and the global order keeps each stream's revisions in order. The key
  -- and the order are the previous version's, so both can run against one schema.
  FOREACH v_stream IN ARRAY v_streams LOOP
    PERFORM pg_advisory_xact_lock(hashtextextended(current_schema() || '/' || v_stream, 0));
  END LOOP;
  SELECT array_agg(coalesce(st.revision, -1) ORDER BY u.o), array_agg(coalesce(st.hash, repeat('0', 64)) ORDER BY u.o),
         array_agg(false ORDER BY u.o)
    INTO v_revs, v_hashes, v_touched
    FROM unnest(v_streams) WITH ORDINALITY AS u(s, o) LEFT JOIN streams st ON st.stream = u.s;
  v_careful := EXISTS (SELECT 1 FROM events e WHERE e.id = ANY (p_ids))
    OR (SELECT count(DISTINCT u.id) FROM unnest(p_ids) AS u(id)) < v_events;

  FOR i IN 1 .. v_requests + 1 LOOP
    -- Insert what is pending: at the end, or before each append when careful (its lookup must see them).
    IF v_pending AND (v_careful OR i > v_requests) THEN
      WITH ins AS (
        INSERT INTO events (id, stream, revision, type, data, metadata, occurred_at, prev_hash, hash)
        SELECT w.id, w.stream, w.revision, w.type, w.data, w.metadata, w.occurred_at, w.prev_hash, w.hash
          FROM unnest(p_ids[v_from:v_first - 1], e_stream[v_from:v_first - 1], e_rev[v_from:v_first - 1],
                      p_types[v_from:v_first - 1], p_data[v_from:v_first - 1], p_metadata[v_from:v_first - 1],
                      p_occurred_at[v_from:v_first - 1], e_prev[v_from:v_first - 1], e_hash[v_from:v_first - 1])
               WITH ORDINALITY AS w(id, stream, revision, type, data, metadata, occurred_at, prev_hash, hash, o)
         WHERE w.revision IS NOT NULL
         ORDER BY w.o
        RETURNING events.id, events.position, events.transaction_id
      )
      SELECT array_agg(u.o ORDER BY u.o), array_agg(ins.position ORDER BY u.o),
             array_agg(ins.transaction_id::text ORDER BY u.o)
        INTO f_x, f_pos, f_xid
        FROM ins JOIN unnest(p_ids[v_from:v_first - 1]) WITH ORDINALITY AS u(id, o) ON u.id = ins.id;
      -- In event order, so each append ends with its last event's.
      FOR m IN 1 .. coalesce(array_length(f_x, 1), 0) LOOP
        k := e_req[v_from + f_x[m]::integer - 1];
        r_pos[k] := f_pos[m];
        r_xid[k] := f_xid[m];
      END LOOP;
      v_pending := false;
      v_from := v_first;
    END IF;
    EXIT WHEN i > v_requests;

    v_count := p_counts[i];
    v_last := v_first + v_count - 1;
    k := array_position(v_streams, p_streams[i]);
    v_rev := v_revs[k];

    -- An append whose ids are all stored, consecutively at the end of a run in the same stream, is a retry;
    -- one that matches only in part, or elsewhere, reuses an id.
    IF v_careful AND v_count > 0 THEN
      SELECT count(e.id), array_agg(e.stream ORDER BY u.o), array_agg(e.revision ORDER BY u.o),
             array_agg(e.position ORDER BY u.o), array_agg(e.transaction_id::text ORDER BY u.o)
        INTO h_hits, h_streams, h_revs, h_pos, h_xids
        FROM unnest(p_ids[v_first:v_last]) WITH ORDINALITY AS u(id, o) LEFT JOIN events e ON e.id = u.id;
      IF h_hits > 0 THEN
        v_ok := h_hits = v_count;
        FOR m IN 1 .. v_count LOOP
          v_ok := v_ok AND h_streams[m] = p_streams[i] AND h_revs[m] = h_revs[1] + m - 1;
        END LOOP;
        IF v_ok THEN
          r_status[i] := 'stored';
          r_rev[i] := h_revs[v_count];
          r_pos[i] := h_pos[v_count];
          r_xid[i] := h_xids[v_count];
        ELSE
          r_status[i] := 'duplicate_id';
          r_detail[i] := p_ids[v_first]::text;
          FOR m IN REVERSE v_count .. 1 LOOP
            IF h_streams[m] IS DISTINCT FROM p_streams[i] THEN
              r_detail[i] := p_ids[v_first + m - 1]::text;
            END IF;
          END LOOP;
        END IF;
      END IF;
    END IF;

    IF r_status[i] IS NULL THEN
      v_ok := CASE p_expected[i]
        WHEN 'any' THEN true
        WHEN 'no_stream' THEN v_rev < 0
        WHEN 'stream_exists' THEN v_rev >= 0
        ELSE p_expected[i]::numeric = v_rev
      END;
      IF NOT v_ok THEN
        r_status[i] := 'wrong_expected_revision';
        r_rev[i] := v_rev;
      ELSIF v_count = 0 THEN
        r_status[i] := 'empty';
        r_rev[i] := v_rev;
      ELSE
        v_hash := v_hashes[k];
        FOR j IN v_first .. v_last LOOP
          v_rev := v_rev + 1;
          e_stream[j] := p_streams[i];
          e_rev[j] := v_rev;
          e_prev[j] := v_hash;
          e_req[j] := i;
          v_hash := encode(sha256(convert_to(
            v_hash || E'\n' || p_hash_heads[j] || v_rev::text || p_hash_tails[j], 'UTF8')), 'hex');
          e_hash[j] := v_hash;
        END LOOP;
        v_revs[k] := v_rev;
        v_hashes[k] := v_hash;
        v_touched[k] := true;
        v_pending := true;
        v_stored := true;
        r_status[i] := 'appended';
        r_rev[i] := v_rev;
      END IF;
    END IF;
    v_first := v_last + 1;
  END LOOP;

  IF v_stored THEN
    INSERT INTO streams (stream, revision, hash)
    SELECT u.s, u.r, u.h FROM unnest(v_streams, v_revs, v_hashes, v_touched) AS u(s, r, h, t) WHERE u.t
    ON CONFLICT (stream) DO UPDATE SET revision = excluded.revision, hash = excluded.hash;
    IF p_channel IS NOT NULL THEN
      PERFORM pg_notify(p_channel, '');
    END IF;
  END IF;
  RETURN QUERY SELECT * FROM unnest(r_status, r_rev, r_pos, r_xid, r_detail);
END
$fn$;
`;

export async function migrateEventStore(client: pg.Pool | pg.PoolClient): Promise<void> {
  // Concurrent first starts (tests, two instances) would race on CREATE ... IF NOT EXISTS. The functions are
  // replaced on every start, so a data directory of an earlier version gets the current ones.
  await client.query(`SELECT pg_advisory_lock(hashtext(current_schema() || '.event_store_ddl'))`);
  try {
    await client.query(EVENT_STORE_DDL);
    await client.query(EVENT_STORE_FUNCTIONS);
  } finally {
    await client.query(`SELECT pg_advisory_unlock(hashtext(current_schema() || '.event_store_ddl'))`);
  }
}
