import type { Sql } from '../types.ts';

/** The pass-through each provider credential's charges come to since `since` (the operator's monthly ceilings). */
export async function passThroughByCredential(
  sql: Sql,
  since: Date,
): Promise<Array<{ provider: string; credential: string; nanos: bigint }>> {
  const { rows } = await sql.query<{ provider: string; credential: string; nanos: string }>(
    `SELECT provider, credential, coalesce(sum(pass_through_nanos), 0)::text AS nanos FROM charges
     WHERE kind = 'settled' AND credential IS NOT NULL AND provider IS NOT NULL AND occurred_at >= $1
     GROUP BY 1, 2`,
    [since],
  );
  return rows.map((r) => ({ provider: r.provider, credential: r.credential, nanos: BigInt(r.nanos) }));
}
