import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import pg from 'pg';

/** A client on the embedded PostgreSQL a gateway manages in `dataDir`, in the gateway's schema. */
export async function embeddedClient(dataDir: string): Promise<pg.Client> {
  const password = (await readFile(join(dataDir, 'pg-password'), 'utf8')).trim();
  const port = Number((await readFile(join(dataDir, 'pg', 'postmaster.pid'), 'utf8')).split('\n')[3]);
  const client = new pg.Client({ host: '127.0.0.1', port, user: 'gateway', password, database: 'postgres' });
  await client.connect();
  await client.query('SET search_path = gateway');
  return client;
}

/** The settlements, overruns and releases of the budget ledger, by request id. */
export async function ledgerByRequest(
  client: pg.Client,
): Promise<Map<string, { settled: number; chargedNanos: bigint; released: number }>> {
  // By the client's X-Request-Id where it sent one: the gateway's own id (the charge's) is recorded beside it.
  const { rows } = await client.query<{ type: string; request_id: string | null; charged: string | null }>(
    // A settlement may carry its request's record (events/logical.ts); else the record is an event of its own.
    `WITH records AS (
       SELECT data->'request' AS r FROM events WHERE type = 'SpendSettled' AND data ? 'request'
       UNION ALL SELECT data FROM events WHERE type = 'RequestCompleted')
     SELECT s.type, COALESCE(rec.r->>'clientRequestId', s.data->>'requestId') AS request_id,
       s.data->>'chargedNanos' AS charged
     FROM events s LEFT JOIN records rec ON rec.r->>'requestId' = s.data->>'requestId'
     WHERE s.type IN ('SpendSettled', 'SpendReleased')`,
  );
  const out = new Map<string, { settled: number; chargedNanos: bigint; released: number }>();
  for (const row of rows) {
    // A release names its hold, not a request: the return of a spend lease has no request at all.
    if (row.request_id === null) continue;
    const entry = out.get(row.request_id) ?? { settled: 0, chargedNanos: 0n, released: 0 };
    if (row.type === 'SpendSettled') {
      entry.settled++;
      entry.chargedNanos += BigInt(row.charged ?? '0');
    } else entry.released++;
    out.set(row.request_id, entry);
  }
  return out;
}

/** The read models that money and requests are reported from, for a comparison with a rebuild. */
export async function readModels(client: pg.Client): Promise<Record<string, unknown[]>> {
  const read = async (sql: string) => (await client.query(sql)).rows;
  return {
    balances: await read('SELECT * FROM balances ORDER BY account_id'),
    usage: await read('SELECT * FROM usage ORDER BY 1, 2, 3, 4'),
    holds: await read('SELECT * FROM holds ORDER BY hold_id'),
    topUps: await read('SELECT * FROM top_ups ORDER BY account_id, reference'),
  };
}
