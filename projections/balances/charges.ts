import { firstOfEach, slices, valuesList } from '../rows.ts';
import type { Folded, Sql } from '../types.ts';

const COLUMNS = [
  ['ord', 'integer'],
  ['event_id', 'uuid'],
  ['account_id', 'text'],
  ['month', 'text'],
  ['kind', 'text'],
  ['request_id', 'text'],
  ['hold_id', 'text'],
  ['sub_account_id', 'text'],
  ['tag', 'text'],
  ['model', 'text'],
  ['provider', 'text'],
  ['lines', 'jsonb'],
  ['pass_through_nanos', 'numeric'],
  ['fee_nanos', 'numeric'],
  ['discount', 'text'],
  ['usage_reported', 'boolean'],
  ['units', 'bigint'],
  ['held_nanos', 'numeric'],
  ['charged_nanos', 'numeric'],
  ['occurred_at', 'timestamptz'],
  ['price_nanos', 'numeric'],
  ['credential', 'text'],
] as const;
const NAMES = COLUMNS.map(([name]) => name);
const TYPES = COLUMNS.map(([, type]) => type);
const STORED = NAMES.slice(1).join(', ');

/**
 * Books a run of charges (`SpendSettled`, `SpendOverrun`, in log order): one multi-row INSERT of their rows and one
 * UPDATE of each account's balance by the sum of the rows that were new (a replayed event changes nothing), stamped
 * with the last of them, as folding them one by one would leave it.
 */
export async function foldCharges(
  sql: Sql,
  t: Record<string, string>,
  items: readonly Folded[],
): Promise<void> {
  for (const slice of slices(firstOfEach(items))) {
    const { text, values } = valuesList(slice.map(chargeRow), TYPES);
    await sql.query(
      `WITH v (${NAMES.join(', ')}) AS (VALUES ${text}),
       inserted AS (
         INSERT INTO ${t.charges} (${STORED}) SELECT ${STORED} FROM v ORDER BY ord
         ON CONFLICT DO NOTHING RETURNING event_id),
       moved AS (
         SELECT v.account_id, sum(v.charged_nanos) AS charged, (array_agg(v.occurred_at ORDER BY v.ord DESC))[1] AS at
         FROM v JOIN inserted USING (event_id) GROUP BY v.account_id)
       UPDATE ${t.balances} AS b SET balance_nanos = b.balance_nanos - moved.charged,
         charged_nanos = b.charged_nanos + moved.charged, updated_at = moved.at
       FROM moved WHERE b.account_id = moved.account_id`,
      values,
    );
  }
}

function chargeRow({ event, stored }: Folded, ord: number): unknown[] {
  if (event.type !== 'SpendSettled' && event.type !== 'SpendOverrun')
    throw new Error(`not a charge: ${event.type}`);
  const d = event.data;
  const settled = event.type === 'SpendSettled' ? event.data : undefined;
  const amount = settled ? settled.chargedNanos : (d as { overrunNanos: string }).overrunNanos;
  return [
    ord,
    stored.id,
    d.accountId,
    d.month,
    settled ? 'settled' : 'overrun',
    d.requestId,
    d.holdId,
    d.subAccountId,
    d.tag,
    settled?.charge.model ?? null,
    settled?.charge.provider ?? null,
    settled ? JSON.stringify(settled.charge.lines) : null,
    settled?.charge.passThroughNanos ?? null,
    settled?.charge.feeNanos ?? null,
    settled?.charge.discount ?? null,
    settled?.charge.usageReported ?? null,
    settled?.charge.units ?? null,
    settled?.heldNanos ?? null,
    amount,
    stored.occurredAt,
    // What the requester was charged: a sub-account's price (docs/billing.md, Reselling), else the cost.
    d.priceNanos ?? amount,
    // The operator's credential that served it (docs/billing.md, Reconciliation); `default` before pools.
    settled ? (settled.charge.credential ?? 'default') : null,
  ];
}
