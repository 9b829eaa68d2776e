import type pg from 'pg';
import { type CacheEntry, type CacheStore, type StoredVector, vectorBytes, vectorOf } from './entry.ts';

const TABLES = `
CREATE TABLE IF NOT EXISTS response_cache (
  scope text NOT NULL,
  key text NOT NULL,
  account_id text NOT NULL,
  entry jsonb NOT NULL,
  expires_at timestamptz NOT NULL,
  PRIMARY KEY (scope, key)
);
CREATE INDEX IF NOT EXISTS response_cache_account ON response_cache (account_id);
CREATE INDEX IF NOT EXISTS response_cache_expiry ON response_cache (expires_at);
CREATE TABLE IF NOT EXISTS response_cache_vectors (
  seq bigserial PRIMARY KEY,
  scope text NOT NULL,
  account_id text NOT NULL,
  grp text NOT NULL,
  key text NOT NULL,
  vector bytea NOT NULL,
  signs bigint,
  expires_at timestamptz NOT NULL
);
ALTER TABLE response_cache_vectors ADD COLUMN IF NOT EXISTS signs bigint;
CREATE INDEX IF NOT EXISTS response_cache_vectors_scope ON response_cache_vectors (scope, seq);
CREATE INDEX IF NOT EXISTS response_cache_vectors_account ON response_cache_vectors (account_id);
CREATE TABLE IF NOT EXISTS response_cache_generations (
  account_id text PRIMARY KEY,
  generation bigint NOT NULL
);`;

/**
 * Entries in PostgreSQL, beside the deployment's other state, so every instance over the same database shares
 * them. They are a cache, not a record: plain tables, no events (a purge is recorded as one, see cache.ts).
 */
export class PostgresCacheStore implements CacheStore {
  constructor(private readonly pool: pg.Pool) {}

  async init(): Promise<void> {
    // Two instances starting at once may both create: the loser's duplicate-object error is harmless.
    await this.pool.query(TABLES).catch(async (error: { code?: string }) => {
      if (!['23505', '42P07', '42701'].includes(error.code ?? '')) throw error;
      await this.pool.query(TABLES);
    });
  }

  async get(scope: string, key: string, now: number): Promise<CacheEntry | undefined> {
    const { rows } = await this.pool.query<{ entry: CacheEntry }>(
      'SELECT entry FROM response_cache WHERE scope = $1 AND key = $2 AND expires_at > $3',
      [scope, key, new Date(now)],
    );
    return rows[0]?.entry;
  }

  async put(entry: CacheEntry): Promise<void> {
    await this.pool.query(
      `INSERT INTO response_cache (scope, key, account_id, entry, expires_at) VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (scope, key) DO UPDATE SET entry = EXCLUDED.entry, expires_at = EXCLUDED.expires_at`,
      [entry.scope, entry.key, entry.accountId, JSON.stringify(entry), entry.expiresAt],
    );
  }

  async addVector(scope: string, accountId: string, vector: Omit<StoredVector, 'seq'>): Promise<void> {
    await this.pool.query(
      `INSERT INTO response_cache_vectors (scope, account_id, grp, key, vector, signs, expires_at)
       VALUES ($1, $2, $3, $4, $5, $6, to_timestamp($7 / 1000.0))`,
      [
        scope,
        accountId,
        vector.group,
        vector.key,
        vectorBytes(vector.vector),
        vector.signs
          ? BigInt.asIntN(64, (BigInt(vector.signs[1]) << 32n) | BigInt(vector.signs[0])).toString()
          : null,
        vector.expiresAtMs,
      ],
    );
  }

  async vectorsSince(scope: string, seq: number, now: number): Promise<StoredVector[]> {
    const { rows } = await this.pool.query<{
      seq: string;
      grp: string;
      key: string;
      vector: Buffer;
      signs: string | null;
      expires_ms: string;
    }>(
      `SELECT seq, grp, key, vector, signs, (extract(epoch FROM expires_at) * 1000)::bigint AS expires_ms
       FROM response_cache_vectors WHERE scope = $1 AND seq > $2 AND expires_at > $3 ORDER BY seq`,
      [scope, seq, new Date(now)],
    );
    return rows.map((r) => ({
      seq: Number(r.seq),
      group: r.grp,
      key: r.key,
      vector: vectorOf(r.vector),
      ...(r.signs !== null && { signs: splitSigns(BigInt.asUintN(64, BigInt(r.signs))) }),
      expiresAtMs: Number(r.expires_ms),
    }));
  }

  async generation(accountId: string): Promise<number> {
    const { rows } = await this.pool.query<{ generation: string }>(
      'SELECT generation FROM response_cache_generations WHERE account_id = $1',
      [accountId],
    );
    return Number(rows[0]?.generation ?? 0);
  }

  async purge(accountId: string, subAccountId: string | null): Promise<number> {
    const client = await this.pool.connect();
    try {
      await client.query('BEGIN');
      const within = subAccountId === null ? 'account_id = $1' : 'scope = $2';
      const args = subAccountId === null ? [accountId] : [accountId, `${accountId}/${subAccountId}`];
      const where = subAccountId === null ? within : `account_id = $1 AND ${within}`;
      const dropped = await client.query(`DELETE FROM response_cache WHERE ${where}`, args);
      await client.query(`DELETE FROM response_cache_vectors WHERE ${where}`, args);
      await client.query(
        `INSERT INTO response_cache_generations (account_id, generation) VALUES ($1, 1)
         ON CONFLICT (account_id) DO UPDATE SET generation = response_cache_generations.generation + 1`,
        [accountId],
      );
      await client.query('COMMIT');
      return dropped.rowCount ?? 0;
    } catch (error) {
      await client.query('ROLLBACK').catch(() => {});
      throw error;
    } finally {
      client.release();
    }
  }

  async sweep(now: number): Promise<void> {
    await this.pool.query('DELETE FROM response_cache WHERE expires_at <= $1', [new Date(now)]);
    await this.pool.query('DELETE FROM response_cache_vectors WHERE expires_at <= $1', [new Date(now)]);
  }

  async close(): Promise<void> {}
}

function splitSigns(bits: bigint): [number, number] {
  return [Number(bits & 0xffffffffn), Number(bits >> 32n)];
}
