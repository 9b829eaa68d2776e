import type { Sql } from '../types.ts';
import type { RequestOwner } from './queries.ts';

export interface ModelUsageRow {
  model: string;
  requests: string;
  cost_nanos: string;
}

/**
 * A month's (`YYYY-MM`, UTC) served requests and their charges per model, most expensive first. The usage read
 * model has no model dimension; the log has one record per request with the charge it settled, so its sums are
 * the same money. Refused and failed requests (status 400 and up) settled nothing and are left out.
 */
export async function usageByModel(sql: Sql, owner: RequestOwner, month: string): Promise<ModelUsageRow[]> {
  const { rows } = await sql.query<ModelUsageRow & Record<string, unknown>>(
    `SELECT model, count(*)::text AS requests, sum(cost_nanos)::text AS cost_nanos FROM request_log
     WHERE account_id = $1 AND ($2::text IS NULL OR sub_account_id = $2)
       AND created_at >= ($3 || '-01T00:00:00Z')::timestamptz
       AND created_at < ($3 || '-01T00:00:00Z')::timestamptz + interval '1 month'
       AND status < 400 AND model IS NOT NULL
     GROUP BY model ORDER BY sum(cost_nanos) DESC, model`,
    [owner.accountId, owner.subAccountId, month],
  );
  return rows;
}
