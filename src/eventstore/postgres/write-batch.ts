import type pg from 'pg';
import { chainHash, GENESIS_HASH, type NewEvent } from '../../../events/envelope.ts';
import {
  type AppendResult,
  DuplicateEventIdError,
  type ExpectedRevision,
  satisfiesExpected,
  WrongExpectedRevisionError,
} from '../../../events/store.ts';
import { toCheckpoint } from './rows.ts';

export interface AppendRequest {
  stream: string;
  events: readonly NewEvent[];
  expected: ExpectedRevision;
}

export type AppendOutcome = { ok: true; result: AppendResult } | { ok: false; error: Error };

interface StreamHead {
  revision: number;
  hash: string;
}

interface StoredId {
  stream: string;
  revision: number;
  position: string;
  transactionId: string;
}

interface PendingRow {
  request: number;
  id: string;
  stream: string;
  revision: number;
  type: string;
  data: string;
  metadata: string;
  occurredAt: Date;
  prevHash: string;
  hash: string;
}

/**
 * Writes several appends inside the caller's open transaction, in a fixed number of round trips whatever the
 * batch size. Each request succeeds or fails on its own; a failed expectation never aborts the transaction.
 * Streams are locked in name order so that concurrent batches cannot deadlock.
 */
export async function writeBatch(
  client: pg.PoolClient,
  requests: readonly AppendRequest[],
  now: Date,
): Promise<AppendOutcome[]> {
  const streams = [...new Set(requests.map((r) => r.stream))].sort();
  // Advisory locks, taken in name order before anything is written, serialize writers per stream without
  // giving this transaction an id yet. Its id is then assigned after every earlier writer of these streams has
  // committed, so the global order (transaction id, position) keeps each stream's revisions in order.
  await client.query(
    `SELECT pg_advisory_xact_lock(hashtextextended(current_schema() || '/' || s, 0))
     FROM (SELECT s FROM unnest($1::text[]) AS s ORDER BY s OFFSET 0) AS sorted`,
    [streams],
  );
  await client.query(
    `INSERT INTO streams (stream, hash) SELECT s, $2 FROM unnest($1::text[]) AS s ORDER BY s ON CONFLICT DO NOTHING`,
    [streams, GENESIS_HASH],
  );
  const locked = await client.query<{ stream: string; revision: string; hash: string }>(
    `SELECT stream, revision, hash FROM streams WHERE stream = ANY($1)`,
    [streams],
  );
  const heads = new Map<string, StreamHead>(
    locked.rows.map((row) => [row.stream, { revision: Number(row.revision), hash: row.hash }]),
  );

  const ids = requests.flatMap((r) => r.events.map((e) => e.id));
  const found = await client.query<{
    id: string;
    stream: string;
    revision: string;
    position: string;
    transaction_id: string;
  }>(`SELECT id, stream, revision, position, transaction_id FROM events WHERE id = ANY($1::uuid[])`, [ids]);
  const stored = new Map<string, StoredId>(
    found.rows.map((row) => [
      row.id,
      {
        stream: row.stream,
        revision: Number(row.revision),
        position: row.position,
        transactionId: row.transaction_id,
      },
    ]),
  );

  const outcomes: (AppendOutcome | undefined)[] = [];
  const rows: PendingRow[] = [];
  requests.forEach((request, index) => {
    const head = heads.get(request.stream) as StreamHead;
    const retry = asRetry(request, stored);
    if (retry) {
      outcomes[index] = retry;
      return;
    }
    if (!satisfiesExpected(request.expected, head.revision)) {
      outcomes[index] = {
        ok: false,
        error: new WrongExpectedRevisionError(request.stream, request.expected, head.revision),
      };
      return;
    }
    for (const event of request.events) {
      const revision = head.revision + 1;
      const occurredAt = event.occurredAt ?? now;
      const hash = chainHash(head.hash, { ...event, stream: request.stream, revision, occurredAt });
      rows.push({
        request: index,
        id: event.id,
        stream: request.stream,
        revision,
        type: event.type,
        data: JSON.stringify(event.data),
        metadata: JSON.stringify(event.metadata),
        occurredAt,
        prevHash: head.hash,
        hash,
      });
      head.revision = revision;
      head.hash = hash;
    }
  });

  if (rows.length > 0) {
    const inserted = await client.query<{ position: string; transaction_id: string }>(
      `INSERT INTO events (id, stream, revision, type, data, metadata, occurred_at, prev_hash, hash)
       SELECT * FROM unnest($1::uuid[], $2::text[], $3::bigint[], $4::text[], $5::jsonb[], $6::jsonb[],
                            $7::timestamptz[], $8::text[], $9::text[])
       RETURNING position, transaction_id`,
      [
        rows.map((r) => r.id),
        rows.map((r) => r.stream),
        rows.map((r) => r.revision),
        rows.map((r) => r.type),
        rows.map((r) => r.data),
        rows.map((r) => r.metadata),
        rows.map((r) => r.occurredAt),
        rows.map((r) => r.prevHash),
        rows.map((r) => r.hash),
      ],
    );
    const touched = [...new Set(rows.map((r) => r.stream))];
    await client.query(
      `UPDATE streams SET revision = u.revision, hash = u.hash
       FROM unnest($1::text[], $2::bigint[], $3::text[]) AS u(stream, revision, hash)
       WHERE streams.stream = u.stream`,
      [touched, touched.map((s) => heads.get(s)?.revision), touched.map((s) => heads.get(s)?.hash)],
    );
    // RETURNING follows the order of the unnest input, so row i of the result is rows[i].
    inserted.rows.forEach((row, i) => {
      const pending = rows[i] as PendingRow;
      outcomes[pending.request] = {
        ok: true,
        result: {
          nextRevision: pending.revision,
          checkpoint: toCheckpoint(row.transaction_id, row.position),
          position: BigInt(row.position),
        },
      };
    });
  }
  return requests.map(
    (request, index) =>
      outcomes[index] ?? {
        ok: true,
        // An empty append succeeds and reports the stream as it stands.
        result: { nextRevision: heads.get(request.stream)?.revision ?? -1, checkpoint: '', position: 0n },
      },
  );
}

/** An append whose ids are all stored, contiguously at the end of a run in the same stream, is a retry. */
function asRetry(request: AppendRequest, stored: Map<string, StoredId>): AppendOutcome | undefined {
  const hits = request.events.map((e) => stored.get(e.id));
  if (hits.every((hit) => hit === undefined)) return undefined;
  const consistent = hits.every(
    (hit, i) =>
      hit !== undefined && hit.stream === request.stream && hit.revision === (hits[0]?.revision ?? 0) + i,
  );
  if (!consistent) {
    const clash =
      request.events.find((e) => stored.get(e.id)?.stream !== request.stream) ?? request.events[0];
    return { ok: false, error: new DuplicateEventIdError(request.stream, clash?.id ?? '') };
  }
  const last = hits[hits.length - 1] as StoredId;
  return {
    ok: true,
    result: {
      nextRevision: last.revision,
      checkpoint: toCheckpoint(last.transactionId, last.position),
      position: BigInt(last.position),
    },
  };
}
