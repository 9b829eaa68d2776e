import type { Projection } from '../types.ts';

/** One row per account. Guarded by the account stream's revision, so a replayed event changes nothing. */
export const accountsProjection: Projection = {
  name: 'accounts',
  tables: {
    accounts: (t) => `CREATE TABLE IF NOT EXISTS ${t} (
      account_id text PRIMARY KEY,
      name text NOT NULL,
      rate_limit_rpm integer NOT NULL,
      created_at timestamptz NOT NULL,
      stream_revision bigint NOT NULL
    )`,
  },
  canHandle: ['AccountOpened'],
  async evolve(sql, t, event, stored) {
    if (event.type !== 'AccountOpened') return;
    await sql.query(
      `INSERT INTO ${t.accounts} (account_id, name, rate_limit_rpm, created_at, stream_revision)
       VALUES ($1, $2, $3, $4, $5) ON CONFLICT (account_id) DO NOTHING`,
      [event.data.accountId, event.data.name, event.data.rateLimitRpm, stored.occurredAt, stored.revision],
    );
  },
};
