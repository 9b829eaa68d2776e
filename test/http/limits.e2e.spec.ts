import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';
import { json } from '../support/json.ts';

let a: TestGateway;
let b: TestGateway;

beforeAll(async () => {
  const redis = { REDIS_URL: inject('redisUrl') };
  a = await startTestGateway(redis);
  b = await startTestGateway(redis, { schema: a.env.GATEWAY_DB_SCHEMA });
});
afterAll(async () => {
  await b?.close();
  await a?.close();
});

it('shares one token bucket per key across instances and answers 429 with Retry-After', async () => {
  const account = await json(await a.admin('/accounts', { name: 'limited' }));
  await a.admin(`/accounts/${account.account_id}/settings`, { rate_limit_rpm: 30 });
  const get = (url: string) =>
    fetch(`${url}/v1/balance`, { headers: { authorization: `Bearer ${account.key}` } });
  // Wait until both instances know the key and its limit (not counting against the bucket: 401s are not taken).
  for (const url of [a.url, b.url]) {
    for (let i = 0; i < 100 && (await get(url)).headers.get('x-ratelimit-limit-requests') !== '30'; i++) {
      await new Promise((r) => setTimeout(r, 20));
    }
  }
  const responses = await Promise.all(Array.from({ length: 60 }, (_, i) => get(i % 2 ? a.url : b.url)));
  const statuses = responses.map((r) => r.status);
  const allowed = statuses.filter((s) => s === 200).length;
  // The two warm-up calls above took their tokens too; a little refill may land during the burst.
  expect(allowed).toBeGreaterThanOrEqual(26);
  expect(allowed).toBeLessThanOrEqual(30);
  const refused = responses.find((r) => r.status === 429);
  expect(refused?.headers.get('retry-after')).toMatch(/^[1-9]\d*$/);
  expect((await json(refused as Response)).error).toMatchObject({ type: 'rate_limit_error', code: 429 });
});
