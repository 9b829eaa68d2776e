import type { Projection, Sql } from '../types.ts';

/** API keys by id: owner, display prefix, hash, and revocation time. */
export const apiKeysProjection: Projection = {
  version: 1,
  name: 'api_keys',
  tables: {
    api_keys: (t) => `CREATE TABLE IF NOT EXISTS ${t} (
      key_id text PRIMARY KEY,
      account_id text NOT NULL,
      key_prefix text NOT NULL,
      key_hash text NOT NULL,
      created_at timestamptz NOT NULL,
      revoked_at timestamptz
    );
    CREATE INDEX ON ${t} (account_id)`,
  },
  canHandle: ['ApiKeyIssued', 'ApiKeyRevoked'],
  async evolve(sql, t, event, stored) {
    switch (event.type) {
      case 'ApiKeyIssued':
        await sql.query(
          `INSERT INTO ${t.api_keys} (key_id, account_id, key_prefix, key_hash, created_at)
           VALUES ($1, $2, $3, $4, $5) ON CONFLICT (key_id) DO NOTHING`,
          [
            event.data.keyId,
            event.data.accountId,
            event.data.keyPrefix,
            event.data.keyHash,
            stored.occurredAt,
          ],
        );
        return;
      case 'ApiKeyRevoked':
        await sql.query(`UPDATE ${t.api_keys} SET revoked_at = $2 WHERE key_id = $1 AND revoked_at IS NULL`, [
          event.data.keyId,
          stored.occurredAt,
        ]);
        return;
      default:
        return;
    }
  },
};

export interface ApiKeyRow {
  key_id: string;
  account_id: string;
  key_prefix: string;
  revoked_at: Date | null;
}

export async function findApiKey(
  sql: { query: (text: string, values: unknown[]) => Promise<{ rows: unknown[] }> },
  keyId: string,
): Promise<ApiKeyRow | undefined> {
  const { rows } = await sql.query(
    'SELECT key_id, account_id, key_prefix, revoked_at FROM api_keys WHERE key_id = $1',
    [keyId],
  );
  return rows[0] as ApiKeyRow | undefined;
}

/**
 * Account-level webhooks are signed with the secret of the account's main key: its oldest key not revoked, or its
 * oldest key when all are revoked.
 */
export async function signingKeyOf(sql: Sql, accountId: string): Promise<string | undefined> {
  const { rows } = await sql.query<{ key_id: string }>(
    `SELECT key_id FROM api_keys WHERE account_id = $1 ORDER BY revoked_at IS NOT NULL, created_at, key_id LIMIT 1`,
    [accountId],
  );
  return rows[0]?.key_id;
}
