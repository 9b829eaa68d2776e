import type { Sql } from '../types.ts';

export type DeliveryStatusName = 'pending' | 'attempting' | 'delivered' | 'abandoned';

export interface DeliveryRow {
  delivery_id: string;
  account_id: string;
  source: string;
  event_id: string;
  event_type: string;
  url: string;
  status: DeliveryStatusName;
  attempts: number;
  last_status: number | null;
  last_error: string | null;
  next_attempt_at: Date | null;
  created_at: Date;
  delivered_at: Date | null;
}

const COLUMNS = `delivery_id, account_id, source, event_id, event_type, url, status, attempts, last_status, last_error,
  next_attempt_at, created_at, delivered_at`;

/** Deliveries whose next attempt is due, or whose attempt in progress outlived its lease; oldest first. */
export async function dueDeliveries(sql: Sql, now: Date, limit: number): Promise<string[]> {
  const { rows } = await sql.query<{ delivery_id: string }>(
    `SELECT delivery_id FROM webhook_deliveries WHERE next_attempt_at <= $1 ORDER BY next_attempt_at LIMIT $2`,
    [now, limit],
  );
  return rows.map((r) => r.delivery_id);
}

/**
 * The delivery made for a source (for example `job:<job id>`), as the read model stands: undefined until the
 * request is projected. `status === 'delivered'` is what `Job.webhook_delivered` reports.
 */
export async function deliveryStatusOf(sql: Sql, source: string): Promise<DeliveryRow | undefined> {
  const { rows } = await sql.query<DeliveryRow & Record<string, unknown>>(
    `SELECT ${COLUMNS} FROM webhook_deliveries WHERE source = $1 ORDER BY created_at LIMIT 1`,
    [source],
  );
  return rows[0];
}

/** The same for many sources at once (a job listing); sources without a delivery are absent from the map. */
export async function deliveryStatusesOf(
  sql: Sql,
  sources: readonly string[],
): Promise<Map<string, DeliveryRow>> {
  if (sources.length === 0) return new Map();
  const { rows } = await sql.query<DeliveryRow & Record<string, unknown>>(
    `SELECT ${COLUMNS} FROM webhook_deliveries WHERE source = ANY($1) ORDER BY created_at`,
    [sources],
  );
  return new Map(rows.map((r) => [r.source, r]));
}

/** An account's latest deliveries, newest first. */
export async function deliveriesOf(sql: Sql, accountId: string, limit = 20): Promise<DeliveryRow[]> {
  const { rows } = await sql.query<DeliveryRow & Record<string, unknown>>(
    `SELECT ${COLUMNS} FROM webhook_deliveries WHERE account_id = $1 ORDER BY created_at DESC, delivery_id LIMIT $2`,
    [accountId, limit],
  );
  return rows;
}

export async function endpointOf(
  sql: Sql,
  accountId: string,
): Promise<{ url: string; updated_at: Date } | undefined> {
  const { rows } = await sql.query<{ url: string; updated_at: Date }>(
    'SELECT url, updated_at FROM webhook_endpoints WHERE account_id = $1',
    [accountId],
  );
  return rows[0];
}

export interface OutboxRow {
  source: string;
  account_id: string;
  event_type: string;
  data: Record<string, unknown>;
  url: string;
  occurred_at: Date;
}

/** Lifecycle notices whose delivery is not requested yet, oldest first. */
export async function pendingNotices(sql: Sql, limit: number): Promise<OutboxRow[]> {
  const { rows } = await sql.query<OutboxRow & Record<string, unknown>>(
    `SELECT source, account_id, event_type, data, url, occurred_at FROM webhook_outbox
     ORDER BY occurred_at, source LIMIT $1`,
    [limit],
  );
  return rows;
}
