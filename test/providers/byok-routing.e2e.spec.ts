import { randomBytes } from 'node:crypto';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { budgetStream, monthOf } from '../../events/budget.ts';
import { buildCatalog } from '../../src/catalog/index.ts';
import type { CatalogModel } from '../../src/catalog/types.ts';
import { chatCharge } from '../../src/chat/pricing.ts';
import { priceCharge } from '../../src/contracts/money.ts';
import { usdText } from '../../src/pipeline/headers.ts';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';
import { json } from '../support/json.ts';
import { logicalStream } from '../support/logical-events.ts';
import { startOpenAiUpstream } from '../upstreams/openai.ts';
import type { Upstream } from '../upstreams/types.ts';

// A routed request's saving is what its requester would have paid at the baseline less what it paid. A requester
// with its own provider key pays the fee alone for a cache hit, so a routed hit's saving is reckoned on fees too.
const BASELINE = 'openai/gpt-4o';

let openai: Upstream;
let gateway: TestGateway;
let accountId: string;
let client: OpenAI;

beforeAll(async () => {
  openai = await startOpenAiUpstream();
  gateway = await startTestGateway({
    OPENAI_BASE_URL: `${openai.url}/v1`,
    OPENAI_API_KEY: 'sk-operator',
    GATEWAY_SECRETS_KEY: randomBytes(32).toString('base64'),
  });
  const account = await json(await gateway.admin('/accounts', { name: 'byok routing' }));
  accountId = account.account_id;
  await gateway.admin(`/accounts/${accountId}/top-ups`, { cents: 10_000, reference: 'funding' });
  client = new OpenAI({ apiKey: account.key, baseURL: `${gateway.url}/v1`, maxRetries: 0 });
  const registered = await fetch(`${gateway.url}/v1/provider-keys`, {
    method: 'POST',
    headers: { authorization: `Bearer ${account.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ provider: 'openai', api_key: 'sk-own-routing', name: 'mine' }),
  });
  expect(registered.status).toBe(200);
});
afterAll(async () => {
  await gateway?.close();
  await openai?.close();
});

const routed = () =>
  client.chat.completions
    .create(
      {
        model: 'auto',
        baseline_model: BASELINE,
        temperature: 0,
        max_tokens: 20,
        messages: [{ role: 'user', content: 'Which river runs through Rome?' }],
      } as never,
      { headers: { 'x-routing': 'cost' } },
    )
    .withResponse();

describe('a routed cache hit on an own provider key', () => {
  it('reports its saving in fees, as the requester pays for a hit', async () => {
    const miss = await routed();
    expect(miss.response.headers.get('x-cache-status')).toBe('miss');
    let hit = await routed();
    const isHit = () => hit.response.headers.get('x-cache-status')?.startsWith('hit') === true;
    for (let tries = 0; !isHit() && tries < 20; tries++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      hit = await routed();
    }
    expect(isHit()).toBe(true);
    const served = hit.response.headers.get('x-model') as string;
    expect(served).not.toBe(BASELINE);

    const events = await logicalStream(gateway.runtime.store, budgetStream(accountId, monthOf(new Date())));
    const charged = events.filter((e) => e.type === 'SpendSettled').at(-1)?.data as {
      chargedNanos: string;
      charge: { discount: string; feeNanos: string };
    };
    expect(charged.charge.discount).toBe('byok');
    const usage = (miss.data as OpenAI.ChatCompletion).usage as OpenAI.CompletionUsage;
    const baseline = buildCatalog().get(BASELINE) as CatalogModel;
    const lines = chatCharge(baseline, {
      promptTokens: usage.prompt_tokens,
      completionTokens: usage.completion_tokens,
      cachedPromptTokens: usage.prompt_tokens_details?.cached_tokens ?? 0,
      cacheWriteTokens: 0,
      reasoningTokens: 0,
    }).lines;
    const atBaseline = priceCharge(lines, 'byok').chargedNanos;
    expect(hit.response.headers.get('x-auto-saved-usd')).toBe(
      usdText(atBaseline - BigInt(charged.chargedNanos)),
    );
  });
});
