import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { runCli } from '../support/cli.ts';
import { eventually } from '../support/gateway.ts';
import { json } from '../support/json.ts';
import { jsonl, waitForStatus } from './support.ts';
import {
  type Funded,
  fundedGateway,
  line,
  openHolds,
  type Sims,
  startSims,
  submit,
} from './upstream-support.ts';

// OpenAI's lines go to its batch API; DeepSeek's (no batch API; pointed at OpenAI's simulator) run here.
const OWN_OPENAI = 'sk-own-openai-batches-4821';
const OWN_DEEPSEEK = 'sk-own-deepseek-lines-9377';
const OPERATOR = { openai: 'Bearer sk-upstream-openai', deepseek: 'Bearer sk-upstream-deepseek' };

let sims: Sims;
let world: Funded;
let openaiKeyId: string;

beforeAll(async () => {
  sims = await startSims();
  world = await fundedGateway({ ...sims.env, GATEWAY_SECRETS_KEY: randomBytes(32).toString('base64') });
});
afterAll(async () => {
  sims?.openai.batches.release();
  await world?.gateway.close();
  await sims?.close();
});

const registerKey = async (provider: string, apiKey: string, name: string) => {
  const response = await fetch(`${world.gateway.url}/v1/provider-keys`, {
    method: 'POST',
    headers: { authorization: `Bearer ${world.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ provider, api_key: apiKey, name }),
  });
  expect(response.status).toBe(200);
  return (await json(response)).id as string;
};

/** The keys the simulator saw since `from`: on calls about batches and files, and on chat calls. */
const keysSince = (from: number) => {
  const seen = sims.openai.requests.slice(from);
  const keys = (test: RegExp) =>
    new Set(seen.filter((r) => test.test(r.path)).map((r) => r.headers.authorization));
  return { batchApi: keys(/^\/v1\/(batches|files)/), chat: keys(/^\/v1\/chat\/completions$/) };
};

interface Charged {
  request_id: string;
  discount: string;
  credential: string | null;
  pass: string;
  fee: string;
  charged: string;
  lines: { unitPriceNanosPerMillion: string }[];
}

async function chargesOf(batchId: string): Promise<Map<string, Charged>> {
  const rows = await eventually(
    async () =>
      (
        await world.gateway.runtime.database.pool.query<Charged>(
          `SELECT request_id, discount, credential, pass_through_nanos::text AS pass, fee_nanos::text AS fee,
                  charged_nanos::text AS charged, lines
           FROM charges WHERE kind = 'settled' AND starts_with(request_id, $1)`,
          [`${batchId}-`],
        )
      ).rows,
    (found) => found.length > 0,
    5_000,
  );
  return new Map(rows.map((row) => [row.request_id.slice(batchId.length + 1), row]));
}

const ceilDiv = (a: bigint, b: bigint) => (a + b - 1n) / b;

it("with no own key, both kinds of line go on the operator's keys at the batch prices, as before", async () => {
  const from = sims.openai.requests.length;
  const created = await submit(world.client, [
    line('o', 'openai/gpt-4o-mini', 'pool question one'),
    line('d', 'deepseek/deepseek-chat', 'pool question two'),
  ]);
  const done = await waitForStatus(world.client, created.id, (s) => s === 'completed');
  expect(done.request_counts).toEqual({ total: 2, completed: 2, failed: 0 });
  expect(keysSince(from)).toEqual({
    batchApi: new Set([OPERATOR.openai]),
    chat: new Set([OPERATOR.deepseek]),
  });
  const charges = await chargesOf(created.id);
  expect(charges.get('1')).toMatchObject({ discount: 'batch_api', credential: 'default' });
  expect(charges.get('2')).toMatchObject({ discount: 'batch_fee', credential: 'default' });
});

it("a provider-batch line and a gateway-run line go on the requester's own keys, charged the fee alone", async () => {
  openaiKeyId = await registerKey('openai', OWN_OPENAI, 'ours');
  await registerKey('deepseek', OWN_DEEPSEEK, 'ds-ours');
  const from = sims.openai.requests.length;
  const created = await submit(world.client, [
    line('o', 'openai/gpt-4o-mini', 'own key question one'),
    line('d', 'deepseek/deepseek-chat', 'own key question two'),
  ]);
  const done = await waitForStatus(world.client, created.id, (s) => s === 'completed');
  expect(done.request_counts).toEqual({ total: 2, completed: 2, failed: 0 });
  // The upload, the creation, the polls and the results download on the own OpenAI key; the line run here on the
  // own DeepSeek key; never the operator's.
  const paths = sims.openai.requests.slice(from).map((r) => `${r.method} ${r.path.replace(/sim\d+/, '…')}`);
  for (const call of [
    'POST /v1/files',
    'POST /v1/batches',
    'GET /v1/batches/batch_…',
    'GET /v1/files/file-…/content',
  ])
    expect(paths).toContain(call);
  expect(keysSince(from)).toEqual({
    batchApi: new Set([`Bearer ${OWN_OPENAI}`]),
    chat: new Set([`Bearer ${OWN_DEEPSEEK}`]),
  });

  const output = jsonl(await (await world.client.files.content(done.output_file_id as string)).text());
  const byId = new Map(output.map((entry) => [entry.custom_id as string, entry]));
  expect(byId.get('o')?.response.body.choices[0].message.content).toBeTruthy();
  expect(byId.get('d')?.response.body.choices[0].message.content).toBeTruthy();

  const charges = await chargesOf(created.id);
  const upstream = charges.get('1');
  const here = charges.get('2');
  expect(upstream).toMatchObject({ discount: 'byok', credential: 'byok:ours' });
  expect(here).toMatchObject({ discount: 'byok', credential: 'byok:ds-ours' });
  // The provider-batch line's pass-through is at the batch rates (what the provider bills the requester); the one run
  // here at the standard rates. Either way the charge is the 5% fee on it, and nothing more.
  expect(upstream?.lines.map((l) => l.unitPriceNanosPerMillion)).toEqual(['75000000', '300000000']);
  const usage = byId.get('o')?.response.body.usage as { prompt_tokens: number; completion_tokens: number };
  const pass =
    ceilDiv(BigInt(usage.prompt_tokens) * 75_000_000n, 1_000_000n) +
    ceilDiv(BigInt(usage.completion_tokens) * 300_000_000n, 1_000_000n);
  expect(BigInt(upstream?.pass ?? 0)).toBe(pass);
  expect(here?.lines[0]?.unitPriceNanosPerMillion).toBe('270000000');
  for (const charge of [upstream, here]) {
    expect(BigInt(charge?.fee ?? 0)).toBe(ceilDiv(BigInt(charge?.pass ?? 0) * 5n, 100n));
    expect(charge?.charged).toBe(charge?.fee);
  }
  expect(await openHolds(world.gateway.runtime.database.pool, created.id)).toBe(0);
});

it("with byok_fallback, a refused own key moves a line run here to the operator's pool, charged as before", async () => {
  await world.gateway.admin(`/accounts/${world.accountId}/settings`, { byok_fallback: true });
  sims.openai.scriptKey?.(OWN_DEEPSEEK, { kind: 'error', status: 401 });
  try {
    const from = sims.openai.requests.length;
    const created = await submit(world.client, [line('d', 'deepseek/deepseek-chat', 'refused own key')]);
    const done = await waitForStatus(world.client, created.id, (s) => s === 'completed');
    expect(done.request_counts).toEqual({ total: 1, completed: 1, failed: 0 });
    const chat = sims.openai.requests.slice(from).filter((r) => r.path === '/v1/chat/completions');
    expect(chat.map((r) => r.headers.authorization)).toEqual([`Bearer ${OWN_DEEPSEEK}`, OPERATOR.deepseek]);
    expect((await chargesOf(created.id)).get('1')).toMatchObject({
      discount: 'batch_fee',
      credential: 'default',
    });
  } finally {
    sims.openai.scriptKey?.(OWN_DEEPSEEK, undefined);
    await world.gateway.admin(`/accounts/${world.accountId}/settings`, { byok_fallback: false });
  }
});

it('a provider batch whose own key is removed fails naming the key, releases its holds, and no other key asks', async () => {
  sims.openai.batches.hold();
  const from = sims.openai.requests.length;
  const created = await submit(world.client, [line('g', 'openai/gpt-4o-mini', 'key goes away')]);
  const pool = world.gateway.runtime.database.pool;
  // Removed once the provider holds the batch and the gateway polls it.
  await eventually(
    async () => ({
      polls: sims.openai.requests.slice(from).filter((r) => /^\/v1\/batches\/batch_/.test(r.path)).length,
      holds: await openHolds(pool, created.id),
    }),
    (seen) => seen.polls > 0 && seen.holds === 1,
    20_000,
  );
  const removed = await fetch(`${world.gateway.url}/v1/provider-keys/${openaiKeyId}`, {
    method: 'DELETE',
    headers: { authorization: `Bearer ${world.key}` },
  });
  expect(removed.status).toBe(200);
  const done = await waitForStatus(world.client, created.id, (s) => s === 'completed', 30_000);
  expect(done.request_counts).toEqual({ total: 1, completed: 0, failed: 1 });
  const errors = jsonl(await (await world.client.files.content(done.error_file_id as string)).text());
  expect(errors[0]?.error).toMatchObject({ code: 'upstream_batch_failed' });
  expect(errors[0]?.error.message).toContain(
    "your openai key 'ours' that submitted this batch has been removed",
  );
  expect(await openHolds(pool, created.id)).toBe(0);
  expect(keysSince(from).batchApi).toEqual(new Set([`Bearer ${OWN_OPENAI}`]));
  sims.openai.batches.release();
});

it('the audit passes on a log with lines charged the fee alone on own keys', async () => {
  const audit = await runCli(['audit'], world.gateway.env);
  expect(audit.stdout).toMatch(/^PASS +batch lines /m);
  expect(audit.code, audit.stdout).toBe(0);
});
