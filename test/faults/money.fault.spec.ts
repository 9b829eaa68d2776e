import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { NANOS_PER_CENT } from '../../events/money.ts';
import { dropSchema } from '../support/database.ts';
import { eventually } from '../support/gateway.ts';
import { Agent, type FaultGateway, inLanes, send, startFaultGateway } from './fault-gateway.ts';

const INSTANCES = 4;
const REQUESTS = 1_000;
const LANES = 200;
const CAP_CENTS = 1_500;
// About two cents each on local/echo-pro (as in test/billing/concurrency.e2e.spec.ts): ~2,400 input tokens and
// 1,000 output tokens, worst case = actual. The cap admits about 640 of the 1,000.
const LONG = Array.from({ length: 1200 }, (_, i) => `w${i % 10}`).join(' ');
// `cache: skip`: every request is held and settled on its own, not answered from the response cache.
const BODY = JSON.stringify({
  model: 'local/echo-pro',
  cache: 'skip',
  max_tokens: 1000,
  messages: [{ role: 'user', content: LONG }],
});

describe('1,000 requests over 4 gateway instances on one PostgreSQL, against one spend cap', () => {
  const schema = `m_${randomBytes(6).toString('hex')}`;
  const gateways: FaultGateway[] = [];
  let subKey = '';

  beforeAll(async () => {
    const env = { DATABASE_URL: inject('databaseUrl'), GATEWAY_DB_SCHEMA: schema };
    // The first creates the schema; the others join it.
    gateways.push(await startFaultGateway(env));
    gateways.push(
      ...(await Promise.all(Array.from({ length: INSTANCES - 1 }, () => startFaultGateway(env)))),
    );
    const [first] = gateways as [FaultGateway];
    const account = (await first.admin('/accounts', { name: 'money' })).json as Record<string, string>;
    await first.admin(`/accounts/${account.account_id}/top-ups`, { cents: 100_000, reference: 'funding' });
    await first.admin(`/accounts/${account.account_id}/settings`, { rate_limit_rpm: 1_000_000 });
    const sub = (
      await send(first.url, {
        method: 'POST',
        path: '/v1/sub-accounts',
        headers: { authorization: `Bearer ${account.key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'capped', spend_cap_cents: CAP_CENTS, rate_limit_rpm: 1_000_000 }),
      })
    ).json as { key: string };
    subKey = sub.key;
    // Every instance must know the key and its cap before the burst.
    for (const g of gateways) {
      await eventually(
        async () =>
          (
            await send(g.url, {
              method: 'GET',
              path: '/v1/balance',
              headers: { authorization: `Bearer ${subKey}` },
            })
          ).json as { cents?: number },
        (b) => b.cents === CAP_CENTS,
        10_000,
      );
    }
  });
  afterAll(async () => {
    await Promise.all(gateways.map((g) => g.stop()));
    await dropSchema(schema);
  });

  it('never settles past the cap, and charges every 200 exactly once', async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: LANES });
    const served = new Map<string, number>();
    const statuses = new Map<number | string, number>();
    const started = Date.now();
    await inLanes(
      Array.from({ length: REQUESTS }, (_, i) => i),
      LANES,
      async (i) => {
        const requestId = `money-${i}`;
        const answer = await send((gateways[i % INSTANCES] as FaultGateway).url, {
          method: 'POST',
          path: '/v1/chat/completions',
          headers: {
            authorization: `Bearer ${subKey}`,
            'content-type': 'application/json',
            'x-request-id': requestId,
          },
          body: BODY,
          agent,
          timeoutMs: 60_000,
        }).catch((error: Error) => ({ status: error.message, headers: {} as Record<string, string> }));
        statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
        if (answer.status === 200) served.set(requestId, Number(answer.headers['x-cost-cents']));
      },
    );
    agent.destroy();
    const seconds = (Date.now() - started) / 1000;

    const client = new pg.Client({ connectionString: inject('databaseUrl') });
    await client.connect();
    const { rows } = await client.query<{ type: string; request_id: string; charged: string | null }>(
      // Charges are the gateway's requests': the client's X-Request-Id is in each one's record, beside its own id.
      // A record is carried by its settlement, or (a request that settled nothing) an event of its own.
      `WITH records AS (
         SELECT data->'request' AS r FROM "${schema}".events WHERE type = 'SpendSettled' AND data ? 'request'
         UNION ALL SELECT data FROM "${schema}".events WHERE type = 'RequestCompleted')
       SELECT s.type, rec.r->>'clientRequestId' AS request_id, s.data->>'chargedNanos' AS charged
       FROM "${schema}".events s JOIN records rec ON rec.r->>'requestId' = s.data->>'requestId'
       WHERE s.type IN ('SpendSettled', 'SpendOverrun') AND rec.r->>'clientRequestId' LIKE 'money-%'`,
    );
    await client.end();
    const settlements = new Map<string, number>();
    let chargedNanos = 0n;
    for (const row of rows.filter((r) => r.type === 'SpendSettled')) {
      settlements.set(row.request_id, (settlements.get(row.request_id) ?? 0) + 1);
      chargedNanos += BigInt(row.charged ?? '0');
    }
    const overruns = rows.filter((r) => r.type === 'SpendOverrun').length;
    const notChargedOnce = [...served.keys()].filter((id) => settlements.get(id) !== 1);
    const chargedUnserved = [...settlements.keys()].filter((id) => !served.has(id));
    const headerCents = [...served.values()].reduce((a, b) => a + b, 0);
    const chargedCents = Number(chargedNanos) / Number(NANOS_PER_CENT);
    console.log(
      `FAULTS money instances=${INSTANCES} requests=${REQUESTS} seconds=${Math.round(seconds)} ` +
        `statuses=${[...statuses].map(([s, n]) => `${s}:${n}`).join(',')} cap_cents=${CAP_CENTS} ` +
        `settled_cents=${chargedCents.toFixed(4)} overspend_cents=${Math.max(0, chargedCents - CAP_CENTS).toFixed(4)} ` +
        `unused_cents=${(CAP_CENTS - chargedCents).toFixed(4)} ok_not_charged_once=${notChargedOnce.length} ` +
        `charged_without_200=${chargedUnserved.length} overruns=${overruns} x_cost_cents_sum=${headerCents.toFixed(4)}`,
    );
    expect(chargedNanos).toBeLessThanOrEqual(BigInt(CAP_CENTS) * NANOS_PER_CENT);
    expect(notChargedOnce).toEqual([]);
    expect(chargedUnserved).toEqual([]);
    expect(overruns).toBe(0);
    expect([...statuses.keys()].every((s) => s === 200 || s === 402)).toBe(true);
    expect(served.size).toBeGreaterThan(0);
    expect(headerCents).toBeCloseTo(chargedCents, 4);
  });
});
