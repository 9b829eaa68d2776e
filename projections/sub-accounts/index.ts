import type { Projection } from '../types.ts';

/** Sub-accounts as created and last updated; deleted ones keep their row with `deleted_at`. */
export const subAccountsProjection: Projection = {
  name: 'sub_accounts',
  version: 1,
  tables: {
    sub_accounts: (t) => `CREATE TABLE IF NOT EXISTS ${t} (
      sub_account_id text PRIMARY KEY,
      account_id text NOT NULL,
      name text NOT NULL,
      external_ref text,
      spend_cap_nanos numeric(38, 0) NOT NULL,
      rate_limit_rpm integer NOT NULL,
      default_tag text,
      key_id text NOT NULL,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      deleted_at timestamptz
    );
    CREATE INDEX ON ${t} (account_id)`,
  },
  canHandle: ['SubAccountCreated', 'SubAccountUpdated', 'SubAccountDeleted'],
  async evolve(sql, t, event, stored) {
    switch (event.type) {
      case 'SubAccountCreated': {
        const d = event.data;
        await sql.query(
          `INSERT INTO ${t.sub_accounts} (sub_account_id, account_id, name, external_ref, spend_cap_nanos, rate_limit_rpm,
             default_tag, key_id, created_at, updated_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $9) ON CONFLICT (sub_account_id) DO NOTHING`,
          [
            d.subAccountId,
            d.accountId,
            d.name,
            d.externalRef,
            d.spendCapNanos,
            d.rateLimitRpm,
            d.defaultTag,
            d.keyId,
            stored.occurredAt,
          ],
        );
        return;
      }
      case 'SubAccountUpdated': {
        const d = event.data;
        // Absent fields keep their value; a null external_ref or default_tag clears it.
        await sql.query(
          `UPDATE ${t.sub_accounts} SET
             name = CASE WHEN $2 THEN $3 ELSE name END,
             external_ref = CASE WHEN $4 THEN $5 ELSE external_ref END,
             spend_cap_nanos = CASE WHEN $6 THEN $7::numeric ELSE spend_cap_nanos END,
             rate_limit_rpm = CASE WHEN $8 THEN $9::integer ELSE rate_limit_rpm END,
             default_tag = CASE WHEN $10 THEN $11 ELSE default_tag END,
             updated_at = $12
           WHERE sub_account_id = $1`,
          [
            d.subAccountId,
            d.name !== undefined,
            d.name ?? null,
            d.externalRef !== undefined,
            d.externalRef ?? null,
            d.spendCapNanos !== undefined,
            d.spendCapNanos ?? null,
            d.rateLimitRpm !== undefined,
            d.rateLimitRpm ?? null,
            d.defaultTag !== undefined,
            d.defaultTag ?? null,
            stored.occurredAt,
          ],
        );
        return;
      }
      case 'SubAccountDeleted':
        await sql.query(
          `UPDATE ${t.sub_accounts} SET deleted_at = $2, updated_at = $2 WHERE sub_account_id = $1 AND deleted_at IS NULL`,
          [event.data.subAccountId, stored.occurredAt],
        );
        return;
      default:
        return;
    }
  },
};
