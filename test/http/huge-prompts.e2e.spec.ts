import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';
import { json } from '../support/json.ts';

// Before prompts were counted in bounded pieces with the loop given back, each of these held the event loop
// for minutes (BPE is quadratic in a run without spaces), and every other client of the gateway waited.
let gateway: TestGateway;
let key: string;

beforeAll(async () => {
  gateway = await startTestGateway();
  const account = await json(await gateway.admin('/accounts', { name: 'huge prompts' }));
  await gateway.admin(`/accounts/${account.account_id}/top-ups`, { cents: 100_000, reference: 'huge' });
  key = account.key;
});
afterAll(async () => {
  await gateway?.close();
});

const cjk = (n: number) =>
  Array.from({ length: n }, (_, i) => String.fromCodePoint(0x4e00 + ((i * 7919) % 20_000))).join('');

const post = (path: string, body: unknown) =>
  fetch(`${gateway.url}/v1${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });

it.each([
  ['400k of one letter', 'a'.repeat(400_000)],
  ['60k CJK characters with no space', cjk(60_000)],
])('answers a chat request holding %s, counted within its byte bound', async (_name, text) => {
  const started = post('/chat/completions', {
    model: 'local/echo',
    max_tokens: 16,
    messages: [{ role: 'user', content: text }],
  });
  // Another client is served while the big prompt is counted.
  const balance = await fetch(`${gateway.url}/v1/balance`, { headers: { authorization: `Bearer ${key}` } });
  expect(balance.status).toBe(200);
  const response = await started;
  expect(response.status).toBe(200);
  const body = await json(response);
  expect(body.usage.prompt_tokens).toBeGreaterThan(text.length / 64);
  expect(body.usage.prompt_tokens).toBeLessThanOrEqual(Buffer.byteLength(text) + 16);
  expect(body.usage.completion_tokens).toBe(16);
});

it('counts a huge prompt for /v1/messages/count_tokens', async () => {
  const response = await post('/messages/count_tokens', {
    model: 'local/echo',
    messages: [{ role: 'user', content: 'z'.repeat(500_000) }],
  });
  expect(response.status).toBe(200);
  const { input_tokens } = await json(response);
  expect(input_tokens).toBeGreaterThan(500_000 / 64);
  expect(input_tokens).toBeLessThanOrEqual(500_016);
});
