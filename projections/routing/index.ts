import { guardTable } from '../guard.ts';
import type { Projection, Sql } from '../types.ts';

/** The saving the request log's routing record carries, when the request was routed and billed. */
function savedOf(routing: unknown): bigint | undefined {
  if (routing === null || typeof routing !== 'object') return undefined;
  const saved = (routing as { saved_nanos?: unknown }).saved_nanos;
  return typeof saved === 'string' && /^-?\d+$/.test(saved) ? BigInt(saved) : undefined;
}

/**
 * The automatic router's month per account, sub-account ('' for the account's own keys), tag ('' untagged) and
 * label (a sub-account's own tag beside the tag whose budget it spent, '' when none), as the usage table keys them:
 * how many served requests it routed, and the dollars saved against their baselines (negative when routing cost
 * more). Folded from the request log's `RequestCompleted` events, whose `routing` record carries the saving.
 */
export const routingProjection: Projection = {
  name: 'routing',
  version: 2,
  tables: {
    routing_usage: (t) => `CREATE TABLE IF NOT EXISTS ${t} (
      account_id text NOT NULL,
      month text NOT NULL,
      sub_account_id text NOT NULL,
      tag text NOT NULL,
      label text NOT NULL DEFAULT '',
      routed_requests bigint NOT NULL,
      saved_nanos numeric(38, 0) NOT NULL,
      PRIMARY KEY (account_id, month, sub_account_id, tag, label)
    )`,
    routing_events: guardTable,
  },
  canHandle: ['RequestCompleted'],
  async evolve(sql, t, event, stored) {
    if (event.type !== 'RequestCompleted') return;
    const d = event.data;
    const saved = savedOf(d.routing);
    if (saved === undefined || d.status >= 400) return;
    // A record with a budget tag was sent under a label: the budget's tag keys it, the label beside it.
    const labelled = d.budgetTag !== undefined;
    const tag = labelled ? d.budgetTag : d.tag;
    await sql.query(
      `WITH first AS (
         INSERT INTO ${t.routing_events} (event_id) VALUES ($6::uuid) ON CONFLICT DO NOTHING RETURNING event_id)
       INSERT INTO ${t.routing_usage} (account_id, month, sub_account_id, tag, label, routed_requests, saved_nanos)
       SELECT $1::text, $2::text, $3::text, $4::text, $7::text, 1, $5::numeric WHERE EXISTS (SELECT 1 FROM first)
       ON CONFLICT (account_id, month, sub_account_id, tag, label) DO UPDATE SET
         routed_requests = ${t.routing_usage}.routed_requests + 1,
         saved_nanos = ${t.routing_usage}.saved_nanos + EXCLUDED.saved_nanos`,
      [
        d.accountId,
        d.month,
        d.subAccountId ?? '',
        tag ?? '',
        saved.toString(),
        stored.id,
        labelled ? (d.tag ?? '') : '',
      ],
    );
  },
};

export interface RoutingRow {
  key: string;
  routed_requests: string;
  saved_nanos: string;
}

/** One month's routed requests and savings grouped as `usageBy` groups the usage (projections/usage). */
export async function routingBy(
  sql: Sql,
  group: 'tag' | 'own_tag' | 'sub_account_id',
  accountId: string,
  month: string,
  subAccountId?: string,
): Promise<RoutingRow[]> {
  const key = group === 'own_tag' ? `CASE WHEN label <> '' THEN label ELSE tag END` : group;
  const { rows } = await sql.query<RoutingRow & Record<string, unknown>>(
    `SELECT ${key} AS key, sum(routed_requests)::text AS routed_requests, sum(saved_nanos)::text AS saved_nanos
     FROM routing_usage WHERE account_id = $1 AND month = $2 AND ($3::text IS NULL OR sub_account_id = $3)
     GROUP BY 1`,
    [accountId, month, subAccountId ?? null],
  );
  return rows;
}
