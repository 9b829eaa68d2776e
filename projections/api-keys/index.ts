import { DEFAULT_KEY_NAME } from '../../events/account.ts';
import type { Projection, Sql } from '../types.ts';

/**
 * API keys by id, an account's main keys and its sub-accounts' (`sub_account_id` set): owner, name, display prefix,
 * hash, expiry (a rotation's grace end included), and revocation time (a deleted sub-account's keys with it).
 */
export const apiKeysProjection: Projection = {
  // 2: sub-accounts' keys, names, expiries and rotations.
  version: 2,
  name: 'api_keys',
  tables: {
    api_keys: (t) => `CREATE TABLE IF NOT EXISTS ${t} (
      key_id text PRIMARY KEY,
      account_id text NOT NULL,
      sub_account_id text,
      name text NOT NULL,
      key_prefix text NOT NULL,
      key_hash text NOT NULL,
      created_at timestamptz NOT NULL,
      expires_at timestamptz,
      replaced_by text,
      revoked_at timestamptz
    );
    CREATE INDEX ON ${t} (account_id);
    CREATE INDEX ON ${t} (sub_account_id) WHERE sub_account_id IS NOT NULL`,
  },
  canHandle: [
    'ApiKeyIssued',
    'ApiKeyRevoked',
    'ApiKeyRotated',
    'SubAccountCreated',
    'SubAccountDeleted',
    'SubAccountKeyIssued',
    'SubAccountKeyRevoked',
    'SubAccountKeyRotated',
  ],
  async evolve(sql, t, event, stored) {
    const insert = (key: {
      keyId: string;
      accountId: string;
      subAccountId: string | null;
      name?: string | undefined;
      keyPrefix: string;
      keyHash: string;
      expiresAt?: string | null | undefined;
    }) =>
      sql.query(
        `INSERT INTO ${t.api_keys} (key_id, account_id, sub_account_id, name, key_prefix, key_hash, created_at, expires_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (key_id) DO NOTHING`,
        [
          key.keyId,
          key.accountId,
          key.subAccountId,
          key.name ?? DEFAULT_KEY_NAME,
          key.keyPrefix,
          key.keyHash,
          stored.occurredAt,
          key.expiresAt ?? null,
        ],
      );
    const revoke = (column: 'key_id' | 'sub_account_id', id: string) =>
      sql.query(`UPDATE ${t.api_keys} SET revoked_at = $2 WHERE ${column} = $1 AND revoked_at IS NULL`, [
        id,
        stored.occurredAt,
      ]);
    const rotate = (rotation: { keyId: string; replacedBy: string; expiresAt: string }) =>
      sql.query(`UPDATE ${t.api_keys} SET expires_at = $2, replaced_by = $3 WHERE key_id = $1`, [
        rotation.keyId,
        rotation.expiresAt,
        rotation.replacedBy,
      ]);
    switch (event.type) {
      case 'ApiKeyIssued':
        await insert({ ...event.data, subAccountId: null });
        return;
      case 'SubAccountCreated':
        // A sub-account's first key, issued with it, has no name of its own.
        await insert({ ...event.data, name: undefined, expiresAt: null });
        return;
      case 'SubAccountKeyIssued':
        await insert(event.data);
        return;
      case 'ApiKeyRevoked':
      case 'SubAccountKeyRevoked':
        await revoke('key_id', event.data.keyId);
        return;
      case 'SubAccountDeleted':
        await revoke('sub_account_id', event.data.subAccountId);
        return;
      case 'ApiKeyRotated':
      case 'SubAccountKeyRotated':
        await rotate(event.data);
        return;
      default:
        return;
    }
  },
};

export interface ApiKeyRow {
  key_id: string;
  account_id: string;
  sub_account_id: string | null;
  name: string;
  key_prefix: string;
  revoked_at: Date | null;
}

export async function findApiKey(
  sql: { query: (text: string, values: unknown[]) => Promise<{ rows: unknown[] }> },
  keyId: string,
): Promise<ApiKeyRow | undefined> {
  const { rows } = await sql.query(
    'SELECT key_id, account_id, sub_account_id, name, key_prefix, revoked_at FROM api_keys WHERE key_id = $1',
    [keyId],
  );
  return rows[0] as ApiKeyRow | undefined;
}

/**
 * Account-level webhooks are signed with the secret of the account's main key: its oldest main key neither revoked
 * nor expired (a rotated key's grace ended), or its oldest main key when none is left.
 */
export async function signingKeyOf(sql: Sql, accountId: string): Promise<string | undefined> {
  const { rows } = await sql.query<{ key_id: string }>(
    `SELECT key_id FROM api_keys WHERE account_id = $1 AND sub_account_id IS NULL
     ORDER BY revoked_at IS NOT NULL OR coalesce(expires_at <= now(), false), created_at, key_id LIMIT 1`,
    [accountId],
  );
  return rows[0]?.key_id;
}
