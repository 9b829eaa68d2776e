import type pg from 'pg';
import { canonicalJson, type NewEvent } from '../../../events/envelope.ts';
import {
  type AppendResult,
  DuplicateEventIdError,
  type ExpectedRevision,
  UnstorableEventError,
  WrongExpectedRevisionError,
} from '../../../events/store.ts';
import { toCheckpoint } from './rows.ts';

export interface AppendRequest {
  stream: string;
  events: readonly NewEvent[];
  expected: ExpectedRevision;
}

export type AppendOutcome = { ok: true; result: AppendResult } | { ok: false; error: Error };

interface OutcomeRow {
  out_status: 'appended' | 'stored' | 'empty' | 'wrong_expected_revision' | 'duplicate_id';
  out_revision: string | null;
  out_position: string | null;
  out_transaction: string | null;
  out_detail: string | null;
}

/** `event_store_append_v1` (schema.ts), as a named statement: parsed once per connection. */
const APPEND_STATEMENT = {
  name: 'event_store_append_v1',
  text: `SELECT out_status, out_revision, out_position, out_transaction, out_detail
         FROM event_store_append_v1($1::text[], $2::text[], $3::integer[], $4::uuid[], $5::text[], $6::jsonb[],
                                    $7::jsonb[], $8::timestamptz[], $9::text[], $10::text[], $11::text)`,
};

/**
 * Writes several appends with one statement, so in one round trip whatever the batch size: the function
 * `event_store_append_v1` (schema.ts) locks the streams in name order, reads their heads, recognises
 * re-appended ids, checks each expectation, inserts and advances the heads. Each request succeeds or fails on
 * its own; a failed expectation or a reused id never aborts the statement.
 *
 * Run on a client outside a transaction (the store does), the statement is its own transaction. Inside an open
 * one it joins it, and its locks are held until that transaction ends. With `notifyChannel`, a statement that
 * stored something sends a notification on it (delivered at commit).
 */
export async function writeBatch(
  client: pg.Pool | pg.PoolClient,
  requests: readonly AppendRequest[],
  now: Date,
  notifyChannel?: string,
): Promise<AppendOutcome[]> {
  const ids: string[] = [];
  const types: string[] = [];
  const data: string[] = [];
  const metadata: string[] = [];
  const occurred: Date[] = [];
  const heads: string[] = [];
  const tails: string[] = [];
  for (const request of requests) {
    for (const event of request.events) {
      const occurredAt = event.occurredAt ?? now;
      const [head, tail] = hashedAround({ ...event, stream: request.stream, occurredAt });
      ids.push(event.id);
      types.push(event.type);
      data.push(JSON.stringify(event.data));
      metadata.push(JSON.stringify(event.metadata));
      occurred.push(occurredAt);
      heads.push(head);
      tails.push(tail);
    }
  }
  const { rows } = await client.query<OutcomeRow>({
    ...APPEND_STATEMENT,
    values: [
      requests.map((r) => r.stream),
      requests.map((r) => String(r.expected)),
      requests.map((r) => r.events.length),
      ids,
      types,
      data,
      metadata,
      occurred,
      heads,
      tails,
      notifyChannel ?? null,
    ],
  });
  return requests.map((request, i) => toOutcome(request, rows[i]));
}

/**
 * A failed append as the port reports it: PostgreSQL's data exceptions (SQLSTATE class 22: a NUL in jsonb or
 * text, an id that is no UUID) are about what an event holds, so the writer can retry without that event.
 */
export function appendError(request: AppendRequest, error: unknown): Error {
  const code = (error as { code?: unknown } | undefined)?.code;
  if (typeof code === 'string' && code.startsWith('22'))
    return new UnstorableEventError(request.stream, (error as Error).message);
  return error instanceof Error ? error : new Error(String(error));
}

function toOutcome(request: AppendRequest, row: OutcomeRow | undefined): AppendOutcome {
  const revision = Number(row?.out_revision ?? -1);
  switch (row?.out_status) {
    case 'appended':
    case 'stored':
      return {
        ok: true,
        result: {
          nextRevision: revision,
          checkpoint: toCheckpoint(row.out_transaction as string, row.out_position as string),
          position: BigInt(row.out_position as string),
          ...(row.out_status === 'stored' && { existing: true }),
        },
      };
    case 'empty':
      // An empty append succeeds and reports the stream as it stands.
      return { ok: true, result: { nextRevision: revision, checkpoint: '', position: 0n } };
    case 'wrong_expected_revision':
      return { ok: false, error: new WrongExpectedRevisionError(request.stream, request.expected, revision) };
    case 'duplicate_id':
      return { ok: false, error: new DuplicateEventIdError(request.stream, row.out_detail ?? '') };
    default:
      return { ok: false, error: new Error(`event store: no outcome for the append to ${request.stream}`) };
  }
}

const REVISION_KEY = ',"revision":';

/**
 * The event's canonical JSON as `chainHash` (events/envelope.ts) builds it, cut around the revision, which
 * only the database knows once the stream is locked: head + revision + tail is the hashed text. Keys are
 * sorted, so `revision` is followed by `stream`; a quote inside a JSON string is escaped, so the last
 * `,"revision":0,"stream":` is the event's own key whatever its data holds.
 */
export function hashedAround(event: NewEvent & { stream: string; occurredAt: Date }): [string, string] {
  const body = canonicalJson({
    id: event.id,
    type: event.type,
    stream: event.stream,
    revision: 0,
    occurredAt: event.occurredAt.toISOString(),
    data: event.data,
    metadata: event.metadata,
  });
  const at = body.lastIndexOf(`${REVISION_KEY}0,"stream":`);
  if (at < 0) throw new Error('event store: unexpected canonical JSON of an event');
  return [body.slice(0, at + REVISION_KEY.length), body.slice(at + REVISION_KEY.length + 1)];
}
