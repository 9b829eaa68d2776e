import { passThroughByCredential } from '../../../projections/balances/credential-spend.ts';
import type { Sql } from '../../../projections/types.ts';
import type { CredentialPools } from './pool.ts';

/**
 * Starts each credential that has a monthly spend ceiling from what this month's charges already name for it, as
 * the charges read model holds them at start (a charge it has not folded yet is not counted). `also` names others to
 * start so (those the operator added at runtime, whose ceiling may be set later).
 */
export async function seedCredentialSpend(
  pools: CredentialPools,
  sql: Sql,
  now: Date,
  log: (line: string) => void,
  also: Array<{ provider: string; name: string }> = [],
): Promise<void> {
  const named = new Map([...pools.spendLimited(), ...also].map((c) => [`${c.provider}/${c.name}`, c]));
  const limited = [...named.values()];
  if (limited.length === 0) return;
  const month = now.toISOString().slice(0, 7);
  try {
    const spent = await passThroughByCredential(sql, new Date(`${month}-01T00:00:00.000Z`));
    for (const { provider, name } of limited) {
      const row = spent.find((s) => s.provider === provider && s.credential === name);
      if (row) pools.seedSpend(provider, name, month, row.nanos);
    }
  } catch (error) {
    log(`could not read this month's spend per provider credential: ${(error as Error).message}`);
  }
}
