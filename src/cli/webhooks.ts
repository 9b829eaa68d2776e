import type { Sql } from '../../projections/types.ts';
import { deliveriesOf, endpointOf } from '../../projections/webhook-deliveries/queries.ts';

/** `webhooks show`: the account's endpoint and its latest deliveries, read from the read model. */
export async function showWebhooks(sql: Sql, accountId: string): Promise<unknown> {
  const endpoint = await endpointOf(sql, accountId);
  const deliveries = await deliveriesOf(sql, accountId, 20);
  return {
    account_id: accountId,
    url: endpoint?.url ?? null,
    deliveries: deliveries.map((d) => ({
      delivery_id: d.delivery_id,
      event_id: d.event_id,
      type: d.event_type,
      source: d.source,
      url: d.url,
      status: d.status,
      attempts: d.attempts,
      last_status: d.last_status,
      last_error: d.last_error,
      next_attempt_at: d.next_attempt_at?.toISOString() ?? null,
      created_at: d.created_at.toISOString(),
      delivered_at: d.delivered_at?.toISOString() ?? null,
    })),
  };
}
