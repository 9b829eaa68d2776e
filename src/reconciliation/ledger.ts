import type pg from 'pg';
import { dayWindow } from '../contracts/cost-report.ts';

/**
 * The ledger's pass-through for one provider and UTC day, per credential and model, from the `charges` read model:
 * settled charges only (an overrun repeats part of its settled charge's cost), and none served from the gateway's
 * cache (the provider never saw them). Charges are dated when they settled.
 */
export async function ledgerPassThrough(
  pool: pg.Pool,
  provider: string,
  day: string,
  credentials: string[],
): Promise<{ credential: string; model: string; nanos: bigint }[]> {
  const { start, end } = dayWindow(day);
  const { rows } = await pool.query<{ credential: string; model: string; nanos: string }>(
    `SELECT coalesce(credential, 'default') AS credential, model, sum(pass_through_nanos)::text AS nanos
     FROM charges WHERE kind = 'settled' AND provider = $1 AND occurred_at >= $2 AND occurred_at < $3
       AND discount IS DISTINCT FROM 'cache' AND coalesce(credential, 'default') = ANY($4)
     GROUP BY 1, 2`,
    [provider, start, end, credentials],
  );
  return rows.map((r) => ({ credential: r.credential, model: r.model, nanos: BigInt(r.nanos) }));
}
