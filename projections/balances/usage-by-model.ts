import type { Sql } from '../types.ts';

export interface ModelUsageRow {
  model: string;
  requests: string;
  cost_nanos: string;
}

/**
 * A month's (`YYYY-MM`, UTC) charges per model, most expensive first: every charge of the balance, so the same
 * money as the balance and the usage read model, calls that never reach the request log included (shadow replays,
 * replay judges). `requests` counts settled charges, as the usage read model does; an overrun (cost beyond the
 * hold) adds money to the model of the charge it overran, found by its hold, and no request.
 */
export async function usageByModel(
  sql: Sql,
  owner: { accountId: string; subAccountId: string | null },
  month: string,
): Promise<ModelUsageRow[]> {
  const { rows } = await sql.query<ModelUsageRow & Record<string, unknown>>(
    `SELECT model, count(*) FILTER (WHERE kind = 'settled')::text AS requests, sum(charged_nanos)::text AS cost_nanos
     FROM (
       SELECT c.kind, c.charged_nanos,
              coalesce(c.model, (SELECT s.model FROM charges s WHERE s.account_id = c.account_id
                AND s.month = c.month AND s.hold_id = c.hold_id AND s.kind = 'settled' LIMIT 1), '') AS model
       FROM charges c
       WHERE c.account_id = $1 AND c.month = $3 AND ($2::text IS NULL OR c.sub_account_id = $2)
     ) attributed
     GROUP BY model ORDER BY sum(charged_nanos) DESC, model`,
    [owner.accountId, owner.subAccountId, month],
  );
  return rows;
}
