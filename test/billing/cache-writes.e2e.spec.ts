import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { budgetStream, monthOf } from '../../events/budget.ts';
import { buildCatalog } from '../../src/catalog/index.ts';
import { nanosToCents, type PriceLine, priceCharge } from '../../src/contracts/money.ts';
import { runCli } from '../support/cli.ts';
import { eventually, startTestGateway, type TestGateway } from '../support/gateway.ts';
import { json } from '../support/json.ts';
import { startAnthropicUpstream } from '../upstreams/anthropic.ts';
import type { Upstream } from '../upstreams/types.ts';

// /v1/messages sent to Anthropic as it came, with a cache breakpoint: Anthropic bills the cache-written input at
// 1.25 times the input rate, while the hold priced all input at the input rate. The gap was recorded as an
// overrun, and a sub-account's cap could be passed by up to a quarter of its input.
let anthropic: Upstream;
let gateway: TestGateway;

const MODEL = 'anthropic/claude-sonnet-4-5';
const rates = buildCatalog().get(MODEL)?.prices;
if (!rates?.inputNanosPerMillion || !rates.cacheWriteNanosPerMillion || !rates.outputNanosPerMillion)
  throw new Error(`the catalog lacks the token rates of ${MODEL}`);
const {
  inputNanosPerMillion: INPUT,
  cacheWriteNanosPerMillion: WRITE,
  outputNanosPerMillion: OUTPUT,
} = rates;

// 30,000 words, one token each for the gateway's count and the simulator's (which adds 3 per message).
const WORDS = 30_000;
const BIG = 'a '.repeat(WORDS).trimEnd();
const ephemeral = { type: 'ephemeral' };

beforeAll(async () => {
  anthropic = await startAnthropicUpstream();
  gateway = await startTestGateway({
    ANTHROPIC_API_KEY: 'sk-sim-anthropic',
    ANTHROPIC_BASE_URL: anthropic.url,
  });
});
afterAll(async () => {
  await gateway?.close();
  await anthropic?.close();
});

async function account(cents: number) {
  const created = await json(await gateway.admin('/accounts', { name: `cache writes ${cents}` }));
  await gateway.admin(`/accounts/${created.account_id}/top-ups`, { cents, reference: 'funding' });
  return created as { account_id: string; key: string };
}

const call = (key: string, path: string, body: unknown) =>
  fetch(`${gateway.url}/v1${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });

const budgetEvents = (accountId: string) =>
  gateway.runtime.store.readStream(budgetStream(accountId, monthOf(new Date())));

interface Settled {
  heldNanos: string;
  chargedNanos: string;
  charge: { lines: { item: string; quantity: number; unitPriceNanosPerMillion: string }[] };
}

const settledFor = (accountId: string, requestId: string | null) =>
  eventually(
    async () =>
      (await budgetEvents(accountId)).find(
        (e) => e.type === 'SpendSettled' && (e.data as { requestId: string }).requestId === requestId,
      )?.data as Settled | undefined,
    (found) => found !== undefined,
    5000,
  ) as Promise<Settled>;

/** The worst case of `tokens` input tokens at `inputRate` and 16 output tokens, as a hold prices it. */
const held = (tokens: number, inputRate: bigint) =>
  priceCharge([
    { item: 'input_tokens', quantity: tokens, unitPriceNanosPerMillion: inputRate },
    { item: 'output_tokens', quantity: 16, unitPriceNanosPerMillion: OUTPUT },
  ]).chargedNanos;

describe('a Messages request with a cache breakpoint, sent natively', () => {
  it('holds its input at the cache-write rate: a cap that fits the input rate only refuses it, sending nothing', async () => {
    // 11 cents: above the hold at the input rate (with room for the gateway's framing tokens), below the hold at
    // the cache-write rate.
    const capCents = 11;
    expect(held(WORDS + 50, INPUT)).toBeLessThan(BigInt(capCents) * 10_000_000n);
    expect(held(WORDS, WRITE)).toBeGreaterThan(BigInt(capCents) * 10_000_000n);
    const { key } = await account(1_000);
    const sub = await json(await call(key, '/sub-accounts', { name: 'cached', spend_cap_cents: capCents }));
    const message = { model: MODEL, max_tokens: 16, messages: [{ role: 'user', content: BIG }] };

    const before = anthropic.requests.length;
    for (const breakpoint of [
      { cache_control: ephemeral }, // automatic caching: Anthropic places it on the last block
      { messages: [{ role: 'user', content: [{ type: 'text', text: BIG, cache_control: ephemeral }] }] },
    ]) {
      const refused = await call(sub.key, '/messages', { ...message, ...breakpoint });
      expect(refused.status).toBe(402);
      expect((await json(refused)).error).toMatchObject({
        type: 'budget_exceeded',
        message: expect.stringContaining(`Spend cap of sub-account ${sub.id}`),
      });
    }
    expect(anthropic.requests.length).toBe(before);
    // The same request without a breakpoint writes no cache, and fits.
    expect((await call(sub.key, '/messages', message)).status).toBe(200);
  });

  it('charges the cache-written input at the cache-write rate, within the hold, streamed or not', async () => {
    const { account_id, key } = await account(1_000);
    const body = {
      model: MODEL,
      // The reply, `echo: hi`, is two tokens: the hold's output is exactly what is produced.
      max_tokens: 2,
      system: [{ type: 'text', text: BIG, cache_control: { type: 'ephemeral', ttl: '5m' } }],
      messages: [{ role: 'user', content: 'hi' }],
      cache: 'skip',
    };
    const answer = await call(key, '/messages', body);
    expect(answer.status).toBe(200);
    const { usage } = await json(answer);
    // The simulator writes the system prompt (its words + 3), as Anthropic reports it: beside input_tokens.
    expect(usage).toMatchObject({
      input_tokens: 4,
      cache_creation_input_tokens: WORDS + 3,
      cache_read_input_tokens: 0,
      output_tokens: 2,
    });
    const lines: PriceLine[] = [
      { item: 'input_tokens', quantity: 4, unitPriceNanosPerMillion: INPUT },
      { item: 'cache_write_tokens', quantity: WORDS + 3, unitPriceNanosPerMillion: WRITE },
      { item: 'output_tokens', quantity: 2, unitPriceNanosPerMillion: OUTPUT },
    ];
    const expected = priceCharge(lines).chargedNanos;
    expect(answer.headers.get('x-cost-cents')).toBe(String(nanosToCents(expected)));

    const streamed = await call(key, '/messages', { ...body, stream: true });
    expect(streamed.status).toBe(200);
    expect(await streamed.text()).toContain(`"cache_creation_input_tokens":${WORDS + 3}`);

    for (const response of [answer, streamed]) {
      const settled = await settledFor(account_id, response.headers.get('x-request-id'));
      expect(settled.charge.lines).toEqual(
        lines.map((l) => ({ ...l, unitPriceNanosPerMillion: String(l.unitPriceNanosPerMillion) })),
      );
      expect(BigInt(settled.chargedNanos)).toBe(expected);
      expect(BigInt(settled.heldNanos)).toBeGreaterThanOrEqual(expected);
    }
    expect((await budgetEvents(account_id)).filter((e) => e.type === 'SpendOverrun')).toEqual([]);
  });

  it('leaves a log whose holds, caps and prices the audit passes', async () => {
    const audit = await runCli(['audit'], gateway.env);
    for (const check of ['holds', 'caps', 'pricing'])
      expect(audit.stdout, audit.stdout).toMatch(new RegExp(`PASS\\s+${check}\\s`));
  });
});
