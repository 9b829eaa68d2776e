import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { budgetStream, monthOf } from '../../events/budget.ts';
import { dollarsToNanos } from '../../src/catalog/index.ts';
import { nanosToCents, type PriceLine, priceCharge } from '../../src/contracts/money.ts';
import { runCli } from '../support/cli.ts';
import { eventually, startTestGateway, type TestGateway } from '../support/gateway.ts';
import { json } from '../support/json.ts';
import { startGeminiUpstream } from '../upstreams/gemini.ts';
import type { Upstream } from '../upstreams/types.ts';

// Gemini 2.5 Pro bills a prompt above 200k tokens at $2.50 / $15 a million instead of $1.25 / $10, for all its
// tokens; the catalog applied the base tier only, so such a request was held and charged at half the input rate.
let gemini: Upstream;
let gateway: TestGateway;
let key = '';
let accountId = '';

const MODEL = 'google/gemini-2.5-pro';
/** Gemini's documented threshold: the higher rates apply to a prompt of more than 200k tokens. */
const THRESHOLD = 200_000;
// One token a word for the gateway's count (which adds the chat framing) and for the simulator's (3 a message).
const words = (n: number) => 'a '.repeat(n).trimEnd();
const ABOVE = words(205_000);
const BELOW = words(195_000);

beforeAll(async () => {
  gemini = await startGeminiUpstream();
  gateway = await startTestGateway({ GOOGLE_API_KEY: 'sim-google', GOOGLE_BASE_URL: gemini.url });
  const created = await json(await gateway.admin('/accounts', { name: 'long prompts' }));
  ({ key, account_id: accountId } = created);
  await gateway.admin(`/accounts/${accountId}/top-ups`, { cents: 1_000, reference: 'funding' });
});
afterAll(async () => {
  await gateway?.close();
  await gemini?.close();
});

const post = (bearer: string, path: string, body: unknown) =>
  fetch(`${gateway.url}/v1${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${bearer}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });

const chat = (content: string) => ({
  model: MODEL,
  max_tokens: 10,
  cache: 'skip',
  messages: [{ role: 'user', content }],
});

interface Rates {
  input: bigint;
  output: bigint;
}

/** The model's rates as `GET /v1/models` lists them: the base ones and its tiers. */
async function listedRates(): Promise<{ base: Rates; tiers: (Rates & { above: number })[] }> {
  const answer = await fetch(`${gateway.url}/v1/models/${MODEL}`, {
    headers: { authorization: `Bearer ${key}` },
  });
  const { pricing } = await json(answer);
  const nanos = (usd: number) => dollarsToNanos(usd).nanos;
  const rates = (r: { input_per_million_usd: number; output_per_million_usd: number }) => ({
    input: nanos(r.input_per_million_usd),
    output: nanos(r.output_per_million_usd),
  });
  return {
    base: rates(pricing),
    tiers: (pricing.tiers ?? []).map((t: { above_input_tokens: number }) => ({
      above: t.above_input_tokens,
      ...rates(t as never),
    })),
  };
}

const linesAt = (rates: Rates, input: number, output: number): PriceLine[] => [
  { item: 'input_tokens', quantity: input, unitPriceNanosPerMillion: rates.input },
  { item: 'output_tokens', quantity: output, unitPriceNanosPerMillion: rates.output },
];

interface Settled {
  heldNanos: string;
  chargedNanos: string;
  charge: { lines: { item: string; quantity: number; unitPriceNanosPerMillion: string }[] };
}

const budgetEvents = (account: string) =>
  gateway.runtime.store.readStream(budgetStream(account, monthOf(new Date())));

const settledFor = (requestId: string | null) =>
  eventually(
    async () =>
      (await budgetEvents(accountId)).find(
        (e) => e.type === 'SpendSettled' && (e.data as { requestId: string }).requestId === requestId,
      )?.data as Settled | undefined,
    (found) => found !== undefined,
    5000,
  ) as Promise<Settled>;

const asRecorded = (lines: PriceLine[]) =>
  lines.map((l) => ({ ...l, unitPriceNanosPerMillion: String(l.unitPriceNanosPerMillion) }));

describe('a price that rises past a prompt size', () => {
  it('lists the tier beside the base rates', async () => {
    const { base, tiers } = await listedRates();
    expect(base).toEqual({ input: 1_250_000_000n, output: 10_000_000_000n });
    expect(tiers).toEqual([{ above: THRESHOLD, input: 2_500_000_000n, output: 15_000_000_000n }]);
  });

  it('holds and charges a prompt above the threshold at the tier, for all its tokens', async () => {
    const { tiers } = await listedRates();
    const tier = tiers[0] as Rates & { above: number };
    const answer = await post(key, '/chat/completions', chat(ABOVE));
    expect(answer.status).toBe(200);
    const { usage } = await json(answer);
    expect(usage.prompt_tokens).toBeGreaterThan(THRESHOLD);
    const lines = linesAt(tier, usage.prompt_tokens, usage.completion_tokens);
    const expected = priceCharge(lines).chargedNanos;
    expect(answer.headers.get('x-cost-cents')).toBe(String(nanosToCents(expected)));
    const settled = await settledFor(answer.headers.get('x-request-id'));
    expect(settled.charge.lines).toEqual(asRecorded(lines));
    // Held at the tier too, by the gateway's own count of the prompt (no fewer tokens than the simulator's).
    expect(BigInt(settled.heldNanos)).toBeGreaterThanOrEqual(
      priceCharge(linesAt(tier, usage.prompt_tokens, 10)).chargedNanos,
    );
  });

  it('keeps a prompt below the threshold at the base rates', async () => {
    const { base } = await listedRates();
    const answer = await post(key, '/chat/completions', chat(BELOW));
    expect(answer.status).toBe(200);
    const { usage } = await json(answer);
    expect(usage.prompt_tokens).toBeLessThanOrEqual(THRESHOLD);
    const lines = linesAt(base, usage.prompt_tokens, usage.completion_tokens);
    expect(answer.headers.get('x-cost-cents')).toBe(String(nanosToCents(priceCharge(lines).chargedNanos)));
    expect((await settledFor(answer.headers.get('x-request-id'))).charge.lines).toEqual(asRecorded(lines));
  });

  it('refuses, before dispatch, a long prompt whose tier a sub-account cap cannot hold', async () => {
    // 40 cents: over the hold of 205,007 tokens at the base rates (26.9 cents), under the tier's (53.8 cents).
    const sub = await json(await post(key, '/sub-accounts', { name: 'long', spend_cap_cents: 40 }));
    const before = gemini.requests.length;
    const refused = await post(sub.key, '/chat/completions', chat(ABOVE));
    expect(refused.status).toBe(402);
    expect((await json(refused)).error).toMatchObject({
      type: 'budget_exceeded',
      message: expect.stringContaining(`Spend cap of sub-account ${sub.id}`),
    });
    expect(gemini.requests.length).toBe(before);
  });

  it('leaves no overrun, and a log whose holds, caps and prices the audit passes', async () => {
    expect((await budgetEvents(accountId)).filter((e) => e.type === 'SpendOverrun')).toEqual([]);
    const audit = await runCli(['audit'], gateway.env);
    for (const check of ['holds', 'caps', 'pricing'])
      expect(audit.stdout, audit.stdout).toMatch(new RegExp(`PASS\\s+${check}\\s`));
  });
});
