import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.ts';
import { BatchedSql } from '../../src/projections/batched-sql.ts';
import { testDatabase } from '../support/database.ts';

let db: Database;
beforeAll(async () => {
  db = await testDatabase();
  await db.pool.query(`CREATE TABLE awkward (
    id integer PRIMARY KEY, t text, n numeric(38, 0), b boolean, at timestamptz, j jsonb, big bigint)`);
});
afterAll(async () => {
  await db?.close();
});

const awkward = [
  "it's",
  'back\\slash \\n and \\',
  "quote '' doubled",
  'unicode é ✓ 😀',
  '$1 and $$ dollars',
  'semi; colon; DROP TABLE awkward; --',
  '',
];

describe('BatchedSql', () => {
  it('writes parameters as literals that read back exactly as the parameterised statements would', async () => {
    const client = await db.pool.connect();
    try {
      await client.query('BEGIN');
      const sql = new BatchedSql(client);
      const at = new Date('2026-11-22T01:02:03.456Z');
      for (const [i, text] of awkward.entries()) {
        const answer = await sql.query(
          'INSERT INTO awkward (id, t, n, b, at, j, big) VALUES ($1, $2, $3, $4, $5, $6, $7)',
          [
            i,
            text,
            '123456789012345678901234567890',
            i % 2 === 0,
            at,
            JSON.stringify({ text }),
            9007199254740993n,
          ],
        );
        expect(answer).toEqual({ rows: [], rowCount: null });
      }
      await sql.query('INSERT INTO awkward (id, t, n, b, at) VALUES ($1, $2, $3, $4, $5)', [
        99,
        null,
        null,
        null,
        null,
      ]);
      // A read sends what is pending first, then runs with its parameters.
      const { rows } = await sql.query<{ id: number; t: string | null }>(
        'SELECT id, t FROM awkward WHERE id = ANY($1) ORDER BY id',
        [[0, 1, 2, 3, 4, 5, 6, 99]],
      );
      expect(rows.map((r) => r.t)).toEqual([...awkward, null]);
      await sql.query('UPDATE awkward SET n = n + $2::numeric WHERE id = $1', [0, '1']);
      await sql.flush('COMMIT');
    } finally {
      client.release();
    }
    const { rows } = await db.pool.query(
      "SELECT id, t, n::text, b, to_char(at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS') AS at, j, big::text FROM awkward ORDER BY id",
    );
    expect(rows[0]).toEqual({
      id: 0,
      t: "it's",
      n: '123456789012345678901234567891',
      b: true,
      at: '2026-11-22T01:02:03.456',
      j: { text: "it's" },
      big: '9007199254740993',
    });
    expect(rows.map((r) => r.j?.text ?? null)).toEqual([...awkward, null]);
    expect(rows.at(-1)).toMatchObject({ id: 99, t: null, n: null, b: null, at: null });
  });

  it('runs a data-modifying WITH as a buffered write, and a WITH ... SELECT at once', async () => {
    const client = await db.pool.connect();
    try {
      await client.query('BEGIN');
      const sql = new BatchedSql(client);
      await sql.query(
        `WITH added AS (INSERT INTO awkward (id, t) VALUES ($1, $2) RETURNING id)
         UPDATE awkward SET t = t || '+' WHERE id = $1 AND EXISTS (SELECT 1 FROM added)`,
        [200, 'cte'],
      );
      const read = await sql.query<{ t: string }>(
        'WITH x AS (SELECT t FROM awkward WHERE id = $1) SELECT t FROM x',
        [200],
      );
      // The data-modifying CTE's own update cannot see the row it inserted in the same statement.
      expect(read.rows).toEqual([{ t: 'cte' }]);
      await sql.flush('ROLLBACK');
    } finally {
      client.release();
    }
  });

  it('fails the whole batch when one statement fails, and leaves nothing behind', async () => {
    const client = await db.pool.connect();
    try {
      await client.query('BEGIN');
      const sql = new BatchedSql(client);
      await sql.query('INSERT INTO awkward (id, t) VALUES ($1, $2)', [300, 'kept?']);
      await sql.query('INSERT INTO awkward (id, t) VALUES ($1, $2)', [300, 'duplicate']);
      await expect(sql.flush('COMMIT')).rejects.toThrow(/duplicate key/);
      await client.query('ROLLBACK');
    } finally {
      client.release();
    }
    expect((await db.pool.query('SELECT 1 FROM awkward WHERE id = 300')).rowCount).toBe(0);
  });
});
