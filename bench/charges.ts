/**
 * The billing check: every request the gateway answered 200 has exactly one settled charge in its read model
 * (`charges`, kind 'settled'), matched by the X-Request-Id the bench sent: a charge names the gateway's own id of
 * the request, and the request log keeps the client's beside it. Projections run behind the requests, so it polls
 * until every answered request is there or the count stops moving.
 */
import pg from 'pg';
import type { Ledger } from './load.ts';
import type { Charges } from './targets.ts';

export interface ChargeCheck {
  passed: boolean;
  /** Requests answered 200. */
  answered200: number;
  /** Of those, with exactly one settled charge. */
  chargedOnce: number;
  /** Answered 200 and no settled charge (ids, the first few). */
  missing: number;
  missingSample: string[];
  /** Request ids with more than one settled charge. */
  duplicated: number;
  duplicatedSample: string[];
  /** Settled charges for requests not answered 200 (a request the bench gave up on, for instance). */
  chargedWithout200: number;
  /** How long the read model took to catch up after the load stopped. */
  catchUpSeconds: number;
}

export async function checkCharges(
  where: Charges,
  ledger: Ledger,
  options: { maxWaitSeconds: number; stableSeconds: number },
): Promise<ChargeCheck> {
  const client = new pg.Client({ connectionString: where.connectionString });
  await client.connect();
  const started = Date.now();
  try {
    const count = async () => {
      const { rows } = await client.query<{ n: string }>(
        `SELECT count(*) AS n FROM "${where.schema}".charges c JOIN "${where.schema}".request_log r
           ON r.request_id = c.request_id
         WHERE c.kind = 'settled' AND r.client_request_id LIKE $1`,
        [`${ledger.prefix}%`],
      );
      return Number(rows[0]?.n ?? 0);
    };
    let last = -1;
    let lastChange = Date.now();
    for (;;) {
      const n = await count();
      if (n !== last) {
        last = n;
        lastChange = Date.now();
      }
      if (n >= ledger.ok.length) break;
      if (Date.now() - lastChange > options.stableSeconds * 1000) break;
      if (Date.now() - started > options.maxWaitSeconds * 1000) break;
      await new Promise((r) => setTimeout(r, 250));
    }
    const catchUpSeconds = (Date.now() - started) / 1000;
    const { rows } = await client.query<{ request_id: string; n: string }>(
      `SELECT r.client_request_id AS request_id, count(*) AS n FROM "${where.schema}".charges c
         JOIN "${where.schema}".request_log r ON r.request_id = c.request_id
       WHERE c.kind = 'settled' AND r.client_request_id LIKE $1 GROUP BY r.client_request_id`,
      [`${ledger.prefix}%`],
    );
    const charged = new Map(rows.map((r) => [r.request_id, Number(r.n)]));
    const missing: string[] = [];
    const duplicated: string[] = [];
    let chargedOnce = 0;
    for (const id of ledger.ok) {
      const n = charged.get(id) ?? 0;
      if (n === 0) missing.push(id);
      else if (n === 1) chargedOnce++;
      else duplicated.push(id);
      charged.delete(id);
    }
    // What is left was charged without a 200; duplicates among those count as duplicates too.
    for (const [id, n] of charged) if (n > 1) duplicated.push(id);
    return {
      passed: missing.length === 0 && duplicated.length === 0,
      answered200: ledger.ok.length,
      chargedOnce,
      missing: missing.length,
      missingSample: missing.slice(0, 5),
      duplicated: duplicated.length,
      duplicatedSample: duplicated.slice(0, 5),
      chargedWithout200: charged.size,
      catchUpSeconds,
    };
  } finally {
    await client.end();
  }
}
