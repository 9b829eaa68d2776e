import type { Projection } from '../types.ts';
import { catalogNoticesOf } from './catalog-notices.ts';
import { NOTICE_TYPES, noticeOf, noticeSource } from './notices.ts';

/**
 * Webhooks: each account's lifecycle endpoint; the outbox of lifecycle notices waiting to become deliveries (a
 * notice is recorded only when its account has an endpoint at that point of the log, and leaves the outbox when
 * its delivery is requested); and every delivery with its state and when it next needs work, which the
 * delivery worker reads.
 */
export const webhookDeliveriesProjection: Projection = {
  name: 'webhook_deliveries',
  version: 1,
  tables: {
    webhook_endpoints: (t) => `CREATE TABLE IF NOT EXISTS ${t} (
      account_id text PRIMARY KEY,
      url text NOT NULL,
      updated_at timestamptz NOT NULL
    )`,
    webhook_outbox: (t) => `CREATE TABLE IF NOT EXISTS ${t} (
      source text PRIMARY KEY,
      account_id text NOT NULL,
      event_type text NOT NULL,
      data jsonb NOT NULL,
      url text NOT NULL,
      occurred_at timestamptz NOT NULL
    )`,
    webhook_deliveries: (t) => `CREATE TABLE IF NOT EXISTS ${t} (
      delivery_id text PRIMARY KEY,
      account_id text NOT NULL,
      key_id text NOT NULL,
      source text NOT NULL,
      event_id text NOT NULL,
      event_type text NOT NULL,
      url text NOT NULL,
      status text NOT NULL,
      attempts integer NOT NULL,
      last_status integer,
      last_error text,
      next_attempt_at timestamptz,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      delivered_at timestamptz,
      stream_revision bigint NOT NULL
    );
    CREATE INDEX ON ${t} (source);
    CREATE INDEX ON ${t} (account_id, created_at);
    CREATE INDEX ON ${t} (next_attempt_at) WHERE next_attempt_at IS NOT NULL`,
  },
  canHandle: [
    'WebhookEndpointSet',
    ...NOTICE_TYPES,
    'WebhookDeliveryRequested',
    'WebhookAttemptStarted',
    'WebhookAttemptFailed',
    'WebhookDelivered',
    'WebhookAbandoned',
    'CatalogSnapshotTaken',
  ],
  async evolve(sql, t, event, stored) {
    const at = stored.occurredAt;
    switch (event.type) {
      case 'WebhookEndpointSet': {
        const { accountId, url } = event.data;
        if (url === null) {
          await sql.query(`DELETE FROM ${t.webhook_endpoints} WHERE account_id = $1`, [accountId]);
          await sql.query(`DELETE FROM ${t.webhook_outbox} WHERE account_id = $1`, [accountId]);
          return;
        }
        await sql.query(
          `INSERT INTO ${t.webhook_endpoints} (account_id, url, updated_at) VALUES ($1, $2, $3)
           ON CONFLICT (account_id) DO UPDATE SET url = $2, updated_at = $3`,
          [accountId, url, at],
        );
        await sql.query(`UPDATE ${t.webhook_outbox} SET url = $2 WHERE account_id = $1`, [accountId, url]);
        return;
      }
      case 'WebhookDeliveryRequested': {
        const d = event.data;
        await sql.query(
          `INSERT INTO ${t.webhook_deliveries} (delivery_id, account_id, key_id, source, event_id, event_type, url,
             status, attempts, next_attempt_at, created_at, updated_at, stream_revision)
           VALUES ($1, $2, $3, $4, $5, $6, $7, 'pending', 0, $8, $9, $9, $10) ON CONFLICT (delivery_id) DO NOTHING`,
          [
            d.deliveryId,
            d.accountId,
            d.keyId,
            d.source,
            d.eventId,
            d.eventType,
            d.url,
            d.firstAttemptAt,
            at,
            stored.revision,
          ],
        );
        await sql.query(`DELETE FROM ${t.webhook_outbox} WHERE source = $1`, [d.source]);
        return;
      }
      case 'WebhookAttemptStarted':
        // While an attempt is out, the row next needs work when its taker's lease runs out.
        await sql.query(
          `UPDATE ${t.webhook_deliveries} SET status = 'attempting', attempts = $2, next_attempt_at = $3,
             updated_at = $4, stream_revision = $5 WHERE delivery_id = $1`,
          [event.data.deliveryId, event.data.attempt, event.data.leaseUntil, at, stored.revision],
        );
        return;
      case 'WebhookAttemptFailed': {
        const d = event.data;
        await sql.query(
          `UPDATE ${t.webhook_deliveries} SET status = CASE WHEN $2::timestamptz IS NULL THEN 'abandoned' ELSE 'pending' END,
             next_attempt_at = $2, last_status = $3, last_error = $4, updated_at = $5, stream_revision = $6
           WHERE delivery_id = $1`,
          [d.deliveryId, d.nextAttemptAt, d.status, d.error, at, stored.revision],
        );
        return;
      }
      case 'WebhookDelivered':
        await sql.query(
          `UPDATE ${t.webhook_deliveries} SET status = 'delivered', next_attempt_at = NULL, last_status = $2,
             last_error = NULL, delivered_at = $3, updated_at = $3, stream_revision = $4 WHERE delivery_id = $1`,
          [event.data.deliveryId, event.data.status, at, stored.revision],
        );
        return;
      case 'WebhookAbandoned':
        await sql.query(
          `UPDATE ${t.webhook_deliveries} SET status = 'abandoned', next_attempt_at = NULL, updated_at = $2,
             stream_revision = $3 WHERE delivery_id = $1`,
          [event.data.deliveryId, at, stored.revision],
        );
        return;
      case 'CatalogSnapshotTaken':
        // Not an account's event: every account with an endpoint at this point of the log is told.
        for (const notice of catalogNoticesOf(event)) {
          await sql.query(
            `INSERT INTO ${t.webhook_outbox} (source, account_id, event_type, data, url, occurred_at)
             SELECT $1 || ':' || e.account_id, e.account_id, $2, $3, e.url, $4 FROM ${t.webhook_endpoints} e
             ON CONFLICT (source) DO NOTHING`,
            [`${noticeSource(stored)}:${notice.key}`, notice.type, JSON.stringify(notice.data), at],
          );
        }
        return;
      default: {
        const notice = noticeOf(event);
        if (!notice) return;
        await sql.query(
          `INSERT INTO ${t.webhook_outbox} (source, account_id, event_type, data, url, occurred_at)
           SELECT $1, $2, $3, $4, e.url, $5 FROM ${t.webhook_endpoints} e WHERE e.account_id = $2
           ON CONFLICT (source) DO NOTHING`,
          [noticeSource(stored), notice.accountId, notice.type, JSON.stringify(notice.data), at],
        );
      }
    }
  },
};
