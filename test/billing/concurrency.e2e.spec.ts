import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { chat } from '../support/chat.ts';
import { eventually, startTestGateway, type TestGateway } from '../support/gateway.ts';
import { json } from '../support/json.ts';

// About two cents each on local/echo-pro: ~2,400 input tokens and 1,000 output tokens, worst case = actual.
const LONG = Array.from({ length: 1200 }, (_, i) => `w${i % 10}`).join(' ');
const REQUEST = { model: 'local/echo-pro', max_tokens: 1000, messages: [{ role: 'user', content: LONG }] };

let a: TestGateway;
let b: TestGateway;
let accountId: string;
let mainKey: string;

beforeAll(async () => {
  const redis = { REDIS_URL: inject('redisUrl') };
  a = await startTestGateway(redis);
  b = await startTestGateway(redis, { schema: a.env.GATEWAY_DB_SCHEMA });
  const account = await json(await a.admin('/accounts', { name: 'concurrent' }));
  ({ account_id: accountId, key: mainKey } = account);
  await a.admin(`/accounts/${accountId}/top-ups`, { cents: 10_000, reference: 'funding' });
  await a.admin(`/accounts/${accountId}/settings`, { rate_limit_rpm: 100_000 });
  // Both instances must know the key and the top-up before the burst.
  await eventually(
    async () =>
      (await fetch(`${b.url}/v1/balance`, { headers: { authorization: `Bearer ${mainKey}` } })).json(),
    (balance) => (balance as { cents: number }).cents === 10_000,
    3000,
  );
});
afterAll(async () => {
  await b?.close();
  await a?.close();
});

/** 200 concurrent requests, alternately through each instance. */
async function burst(key: string, headers: Record<string, string> = {}) {
  const results = await Promise.all(
    Array.from({ length: 200 }, (_, i) => chat(i % 2 === 0 ? a.url : b.url, key, REQUEST, headers)),
  );
  const served = results.filter((r) => r.status === 200);
  const refused = results.filter((r) => r.status === 402);
  expect(served.length + refused.length).toBe(200);
  const costs = served.map((r) => Number(r.headers.get('x-cost-cents')));
  const chargedCents = costs.reduce((sum, c) => sum + c, 0);
  // "Nearly all of the cap is usable": what is left is less than what two more requests would need.
  const unusableLimit = 2 * Math.max(...costs);
  return { served, refused, chargedCents, unusableLimit };
}

describe('spend caps under concurrency, across two gateway instances sharing one store and one Redis', () => {
  it('never lets a sub-account settle past its $1.00 cap, and leaves little of it unusable', async () => {
    const sub = await json(
      await fetch(`${a.url}/v1/sub-accounts`, {
        method: 'POST',
        headers: { authorization: `Bearer ${mainKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'capped', spend_cap_cents: 100, rate_limit_rpm: 100_000 }),
      }),
    );
    await eventually(
      async () =>
        (await fetch(`${b.url}/v1/balance`, { headers: { authorization: `Bearer ${sub.key}` } })).status,
      (status) => status === 200,
    );
    const { refused, chargedCents, unusableLimit } = await burst(sub.key);
    expect(chargedCents).toBeLessThanOrEqual(100);
    expect(chargedCents).toBeGreaterThan(100 - unusableLimit);
    expect(refused[0]?.body.error).toMatchObject({ type: 'budget_exceeded', code: 402 });
    expect(refused[0]?.body.error.message).toMatch(
      /Spend cap of sub-account sa_\w+ reached: cap \$1\.00, spent \$0\.\d+/,
    );

    const usage = await eventually(
      async () =>
        json(
          await fetch(`${a.url}/v1/sub-accounts/${sub.id}`, {
            headers: { authorization: `Bearer ${mainKey}` },
          }),
        ),
      (record) => record.spent_cents > 0 && Math.abs(record.spent_cents - chargedCents) < 1e-6,
      5000,
    );
    expect(usage.spent_cents).toBeCloseTo(chargedCents, 6);
  });

  it('never lets a tag settle past its monthly budget', async () => {
    const set = await fetch(`${a.url}/v1/budgets`, {
      method: 'POST',
      headers: { authorization: `Bearer ${mainKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ tag: 'campaign', cap_cents: 100 }),
    });
    expect(set.status).toBe(200);
    await eventually(
      async () => (await chat(b.url, mainKey, REQUEST, { 'x-gw-tag': 'other' })).status,
      () => true,
    );
    const { refused, chargedCents, unusableLimit } = await burst(mainKey, { 'x-gw-tag': 'campaign' });
    expect(chargedCents).toBeLessThanOrEqual(100);
    expect(chargedCents).toBeGreaterThan(100 - unusableLimit);
    expect(refused[0]?.body.error.message).toMatch(/Monthly budget of tag 'campaign' reached: cap \$1\.00/);
  });

  it('holds the account balance itself the same way', async () => {
    const other = await json(await a.admin('/accounts', { name: 'small' }));
    await a.admin(`/accounts/${other.account_id}/top-ups`, { cents: 100, reference: 'small' });
    await a.admin(`/accounts/${other.account_id}/settings`, { rate_limit_rpm: 100_000 });
    await eventually(
      async () =>
        (await fetch(`${b.url}/v1/balance`, { headers: { authorization: `Bearer ${other.key}` } })).json(),
      (balance) => (balance as { cents: number }).cents === 100,
      3000,
    );
    const { refused, chargedCents, unusableLimit } = await burst(other.key);
    expect(chargedCents).toBeLessThanOrEqual(100);
    expect(chargedCents).toBeGreaterThan(100 - unusableLimit);
    expect(refused[0]?.body.error.type).toBe('insufficient_balance');
  });
});
