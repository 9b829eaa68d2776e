import type { Projection } from '../types.ts';

/** Monthly caps per cost tag, as last set; a removed budget has no row. */
export const tagBudgetsProjection: Projection = {
  name: 'tag_budgets',
  version: 1,
  tables: {
    tag_budgets: (t) => `CREATE TABLE IF NOT EXISTS ${t} (
      account_id text NOT NULL,
      tag text NOT NULL,
      cap_nanos numeric(38, 0) NOT NULL,
      updated_at timestamptz NOT NULL,
      PRIMARY KEY (account_id, tag)
    )`,
  },
  canHandle: ['TagBudgetSet', 'TagBudgetRemoved'],
  async evolve(sql, t, event, stored) {
    if (event.type === 'TagBudgetRemoved') {
      await sql.query(`DELETE FROM ${t.tag_budgets} WHERE account_id = $1 AND tag = $2`, [
        event.data.accountId,
        event.data.tag,
      ]);
      return;
    }
    if (event.type !== 'TagBudgetSet') return;
    await sql.query(
      `INSERT INTO ${t.tag_budgets} (account_id, tag, cap_nanos, updated_at) VALUES ($1, $2, $3, $4)
       ON CONFLICT (account_id, tag) DO UPDATE SET cap_nanos = $3, updated_at = $4`,
      [event.data.accountId, event.data.tag, event.data.capNanos, stored.occurredAt],
    );
  },
};
