import type { Projection } from '../types.ts';

/**
 * One row per account with its current settings. Each update applies only to an older row (by the account
 * stream's revision), so a replayed event changes nothing.
 */
export const accountsProjection: Projection = {
  name: 'accounts',
  version: 2,
  tables: {
    accounts: (t) => `CREATE TABLE IF NOT EXISTS ${t} (
      account_id text PRIMARY KEY,
      name text NOT NULL,
      rate_limit_rpm integer NOT NULL,
      balance_low_threshold_nanos numeric(38, 0),
      created_at timestamptz NOT NULL,
      stream_revision bigint NOT NULL
    )`,
  },
  canHandle: ['AccountOpened', 'AccountSettingsChanged'],
  async evolve(sql, t, event, stored) {
    switch (event.type) {
      case 'AccountOpened':
        await sql.query(
          `INSERT INTO ${t.accounts} (account_id, name, rate_limit_rpm, created_at, stream_revision)
           VALUES ($1, $2, $3, $4, $5) ON CONFLICT (account_id) DO NOTHING`,
          [
            event.data.accountId,
            event.data.name,
            event.data.rateLimitRpm,
            stored.occurredAt,
            stored.revision,
          ],
        );
        return;
      case 'AccountSettingsChanged':
        await sql.query(
          `UPDATE ${t.accounts} SET rate_limit_rpm = COALESCE($2, rate_limit_rpm),
             balance_low_threshold_nanos = COALESCE($3::numeric, balance_low_threshold_nanos), stream_revision = $4
           WHERE account_id = $1 AND stream_revision < $4`,
          [
            event.data.accountId,
            event.data.rateLimitRpm ?? null,
            event.data.balanceLowThresholdNanos ?? null,
            stored.revision,
          ],
        );
        return;
      default:
        return;
    }
  },
};
