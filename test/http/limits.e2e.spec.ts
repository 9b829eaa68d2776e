import OpenAI from 'openai';
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

it('counts every key of an account and its sub-accounts against one account bucket, and a sub-account against its own', async () => {
  const account = await json(await a.admin('/accounts', { name: 'shared' }));
  await a.admin(`/accounts/${account.account_id}/settings`, { rate_limit_rpm: 30 });
  await a.admin(`/accounts/${account.account_id}/top-ups`, { cents: 100, reference: 'funding' });
  const second = await json(await a.admin(`/accounts/${account.account_id}/keys`, {}));
  const get = (key: string) => fetch(`${a.url}/v1/balance`, { headers: { authorization: `Bearer ${key}` } });
  const sub = await json(
    await fetch(`${a.url}/v1/sub-accounts`, {
      method: 'POST',
      headers: { authorization: `Bearer ${account.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'ten a minute', spend_cap_cents: 10, rate_limit_rpm: 10 }),
    }),
  );
  // Wait until the instance knows the new key and the sub-account (401s take no token).
  for (const key of [second.key, sub.key]) {
    for (let i = 0; i < 100 && (await get(key)).status === 401; i++)
      await new Promise((r) => setTimeout(r, 20));
  }
  // The sub-account's own bucket (10 a minute, less the warm-up call) refuses first, saying whose limit it is.
  const customer = await Promise.all(Array.from({ length: 12 }, () => get(sub.key)));
  const customerAllowed = customer.filter((r) => r.status === 200).length;
  expect(customerAllowed).toBeGreaterThanOrEqual(8);
  expect(customerAllowed).toBeLessThanOrEqual(10);
  const refusedCustomer = customer.find((r) => r.status === 429) as Response;
  expect((await json(refusedCustomer)).error.message).toContain('for this sub-account');
  // What is left of the account's 30 is shared by its two keys: not 30 each.
  const mains = await Promise.all(
    Array.from({ length: 40 }, (_, i) => get(i % 2 ? account.key : second.key)),
  );
  const mainAllowed = mains.filter((r) => r.status === 200).length;
  expect(customerAllowed + mainAllowed).toBeLessThanOrEqual(30);
  expect(mainAllowed).toBeGreaterThanOrEqual(15);
  const refusedMain = mains.find((r) => r.status === 429) as Response;
  expect(refusedMain.headers.get('x-ratelimit-limit-requests')).toBe('30');
  expect((await json(refusedMain)).error.message).toContain('for this account');
});

it("shares a sub-account's tokens per minute between instances, and either instance's true-up", async () => {
  const account = await json(await a.admin('/accounts', { name: 'tokens' }));
  await a.admin(`/accounts/${account.account_id}/top-ups`, { cents: 1000, reference: 'funding' });
  const sub = await json(
    await fetch(`${a.url}/v1/sub-accounts`, {
      method: 'POST',
      headers: { authorization: `Bearer ${account.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'a thousand tokens', spend_cap_cents: 500, rate_limit_tpm: 1000 }),
    }),
  );
  const balance = (url: string) =>
    fetch(`${url}/v1/balance`, { headers: { authorization: `Bearer ${sub.key}` } });
  for (let i = 0; i < 100 && (await balance(b.url)).status === 401; i++) {
    await new Promise((r) => setTimeout(r, 20));
  }
  const [onA, onB] = [a, b].map(
    (g) => new OpenAI({ apiKey: sub.key, baseURL: `${g.url}/v1`, maxRetries: 0 }),
  );
  const ask = (text: string, maxTokens: number) => ({
    model: 'local/echo',
    max_tokens: maxTokens,
    messages: [{ role: 'user' as const, content: text }],
  });
  // Admitted on A at its worst case (about 910), of which the short answer uses about 12.
  const first = await (onA as OpenAI).chat.completions.create(ask('hi there', 900)).withResponse();
  expect(first.response.headers.get('x-ratelimit-limit-tokens')).toBe('1000');
  // B admits about 460 more: only because A gave back what it did not use, in the same bucket. (Without the
  // true-up about 90 would be left, and 460 take 22 s to refill.)
  const hellos = Array.from({ length: 200 }, () => 'hello').join(' ');
  const long = await (onB as OpenAI).chat.completions.create(ask(hellos, 250)).withResponse();
  expect(long.response.headers.get('x-ratelimit-limit-tokens')).toBe('1000');
  const used = (first.data.usage?.total_tokens as number) + (long.data.usage?.total_tokens as number);
  // And A, whose own bucket would still hold 900, is refused by what B used.
  const worst = (first.data.usage?.prompt_tokens as number) + 890;
  const refused = await (onA as OpenAI).chat.completions.create(ask('hi there', 890)).then(
    () => undefined,
    (e: unknown) => e as InstanceType<typeof OpenAI.APIError>,
  );
  expect(refused?.status).toBe(429);
  expect(refused?.message).toContain('tokens per minute reached for this sub-account');
  const remaining = Number(refused?.headers?.get('x-ratelimit-remaining-tokens'));
  expect(remaining).toBeGreaterThanOrEqual(1000 - used);
  expect(remaining).toBeLessThan(worst);
  expect(Number(refused?.headers?.get('retry-after'))).toBeGreaterThanOrEqual(1);
});
