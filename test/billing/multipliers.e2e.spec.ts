import { afterAll, beforeAll, expect, it } from 'vitest';
import { buildCatalog } from '../../src/catalog/index.ts';
import { chatCharge, tokensOnly } from '../../src/chat/pricing.ts';
import { nanosToCents } from '../../src/contracts/money.ts';
import { eventually, startTestGateway, type TestGateway } from '../support/gateway.ts';
import { json } from '../support/json.ts';
import { startOpenAiUpstream } from '../upstreams/openai.ts';
import type { Upstream } from '../upstreams/types.ts';

// A hold that covered one choice let `n` choices overdraw: a 10-cent account asking n=128 was charged 129 cents.
let openai: Upstream;
let gateway: TestGateway;

beforeAll(async () => {
  openai = await startOpenAiUpstream();
  gateway = await startTestGateway({ OPENAI_API_KEY: 'sk-upstream', OPENAI_BASE_URL: `${openai.url}/v1` });
});
afterAll(async () => {
  await gateway?.close();
  await openai?.close();
});

async function account(cents: number) {
  const created = await json(await gateway.admin('/accounts', { name: `funded ${cents}` }));
  await gateway.admin(`/accounts/${created.account_id}/top-ups`, { cents, reference: 'funding' });
  return created as { account_id: string; key: string };
}

const call = (key: string, path: string, body: unknown) =>
  fetch(`${gateway.url}/v1${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });

const manyChoices = {
  model: 'openai/gpt-4o-mini',
  max_tokens: 16_000,
  n: 128,
  messages: [{ role: 'user', content: 'Write a very long story.' }],
};

const balanceOf = async (key: string) =>
  (await json(await fetch(`${gateway.url}/v1/balance`, { headers: { authorization: `Bearer ${key}` } })))
    .cents;

it('holds for every choice, so n choices cannot overdraw the balance', async () => {
  const { key } = await account(10);
  const response = await call(key, '/chat/completions', manyChoices);
  expect(response.status).toBe(402);
  expect((await json(response)).error.type).toBe('insufficient_balance');
  expect(
    await eventually(
      () => balanceOf(key),
      (cents) => cents === 10,
      3000,
    ),
  ).toBe(10);
});

it('holds for every choice against a sub-account cap', async () => {
  const { key } = await account(10_000);
  const sub = await json(await call(key, '/sub-accounts', { name: 'capped', spend_cap_cents: 5 }));
  const response = await call(sub.key, '/chat/completions', manyChoices);
  expect(response.status).toBe(402);
});

it('charges what the provider bills for n choices, within what was held', async () => {
  const { key } = await account(1_000);
  const response = await call(key, '/chat/completions', { ...manyChoices, n: 3, max_tokens: 50 });
  expect(response.status).toBe(200);
  const body = await json(response);
  expect(body.choices).toHaveLength(3);
  const model = buildCatalog().get('openai/gpt-4o-mini');
  if (!model) throw new Error('catalog lacks openai/gpt-4o-mini');
  const { prompt_tokens, completion_tokens } = body.usage;
  const charged = chatCharge(model, tokensOnly(prompt_tokens, completion_tokens)).chargedNanos;
  expect(response.headers.get('x-cost-cents')).toBe(String(nanosToCents(charged)));
  expect(completion_tokens % 3).toBe(0);
  expect(completion_tokens).toBeGreaterThan(0);
});

it('refuses n out of range, audio output and web search, which no hold covers', async () => {
  const { key } = await account(100);
  const base = { model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] };
  for (const [extra, field] of [
    [{ n: 0 }, 'n'],
    [{ n: 129 }, 'n'],
    [{ modalities: ['text', 'audio'], audio: { voice: 'alloy', format: 'wav' } }, 'modalities'],
    [{ web_search_options: {} }, 'web_search_options'],
  ] as const) {
    const response = await call(key, '/chat/completions', { ...base, ...extra });
    expect(response.status).toBe(400);
    expect((await json(response)).error.message).toContain(field);
  }
});
