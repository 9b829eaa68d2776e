import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { budgetStream, monthOf } from '../../events/budget.ts';
import { buildCatalog } from '../../src/catalog/index.ts';
import { chatCharge, tokensOnly } from '../../src/chat/pricing.ts';
import { nanosToCents } from '../../src/contracts/money.ts';
import { eventually, startTestGateway, type TestGateway } from '../support/gateway.ts';
import { json } from '../support/json.ts';
import { startAnthropicUpstream } from '../upstreams/anthropic.ts';
import { startOpenAiUpstream } from '../upstreams/openai.ts';
import type { Upstream } from '../upstreams/types.ts';

// Fields that change the price reached the provider while the client was charged standard token prices, and a
// legacy `suffix` or a chat `prediction` was held as if empty (a 90 KB suffix held $0.000015 against $0.0236).
let openai: Upstream;
let anthropic: Upstream;
let gateway: TestGateway;

beforeAll(async () => {
  [openai, anthropic] = await Promise.all([startOpenAiUpstream(), startAnthropicUpstream()]);
  gateway = await startTestGateway({
    OPENAI_API_KEY: 'sk-upstream',
    OPENAI_BASE_URL: `${openai.url}/v1`,
    ANTHROPIC_API_KEY: 'sk-sim-anthropic',
    ANTHROPIC_BASE_URL: anthropic.url,
  });
});
afterAll(async () => {
  await gateway?.close();
  await Promise.all([openai?.close(), anthropic?.close()]);
});

async function account(cents: number) {
  const created = await json(await gateway.admin('/accounts', { name: `priced ${cents}` }));
  await gateway.admin(`/accounts/${created.account_id}/top-ups`, { cents, reference: 'funding' });
  return created as { account_id: string; key: string };
}

const call = (key: string, path: string, body: unknown) =>
  fetch(`${gateway.url}/v1${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });

/** What the account's hold for a request (by the `X-Request-Id` it answered) was, from its budget stream. */
const heldFor = (accountId: string, requestId: string | null) =>
  eventually(
    async () => {
      const events = await gateway.runtime.store.readStream(budgetStream(accountId, monthOf(new Date())));
      const held = events.find(
        (e) => e.type === 'SpendReserved' && (e.data as { requestId: string }).requestId === requestId,
      );
      return held ? BigInt((held.data as { amountNanos: string }).amountNanos) : undefined;
    },
    (amount) => amount !== undefined,
    5000,
  ) as Promise<bigint>;

const overrunsOf = async (accountId: string) =>
  (await gateway.runtime.store.readStream(budgetStream(accountId, monthOf(new Date())))).filter(
    (e) => e.type === 'SpendOverrun',
  ).length;

const chat = { model: 'openai/gpt-4o-mini', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] };
// 90 KB, 6,751 tokens: held as input on gpt-3.5-turbo-instruct, just over a cent. Three times as much as a
// prediction on gpt-4o-mini (input, and output when rejected): 1.6 cents.
const LARGE = 'international development understanding '.repeat(2250);
const PREDICTION = LARGE.repeat(3);

async function refused(key: string, path: string, body: unknown, field: string) {
  const before = openai.requests.length + anthropic.requests.length;
  const response = await call(key, path, body);
  const error = (await json(response)).error;
  expect({ status: response.status, field }).toEqual({ status: 400, field });
  expect(error.message).toContain(`'${field}'`);
  expect(error.param).toBe(field);
  expect(openai.requests.length + anthropic.requests.length).toBe(before);
}

describe('chat fields the gateway cannot price', () => {
  it('refuses service tiers billed at rates of their own, naming service_tier, and sends nothing', async () => {
    const { key } = await account(100);
    for (const tier of ['priority', 'flex', 'scale'])
      await refused(key, '/chat/completions', { ...chat, service_tier: tier }, 'service_tier');
    // The Anthropic adapter would drop the tier and serve the standard one: refused there too, not ignored.
    await refused(
      key,
      '/chat/completions',
      { ...chat, model: 'anthropic/claude-sonnet-4-5', service_tier: 'priority' },
      'service_tier',
    );
  });

  it('refuses audio input, billed per audio token, naming the part', async () => {
    const { key } = await account(100);
    const audio = { type: 'input_audio', input_audio: { data: 'UklGRg==', format: 'wav' } };
    const messages = [
      { role: 'system', content: 'Transcribe.' },
      { role: 'user', content: [{ type: 'text', text: 'this:' }, audio] },
    ];
    await refused(key, '/chat/completions', { ...chat, messages }, 'messages[1].content[1].type');
  });

  it('refuses prompt-cache writes in a chat body, billed above input and reported by no chat usage', async () => {
    const { key } = await account(100);
    const marked = { type: 'text', text: 'a long shared preamble', cache_control: { type: 'ephemeral' } };
    await refused(
      key,
      '/chat/completions',
      { ...chat, messages: [{ role: 'user', content: [marked] }] },
      'messages[0].content[0].cache_control',
    );
    await refused(
      key,
      '/chat/completions',
      { ...chat, messages: [{ role: 'user', content: 'hi', cache_control: { type: 'ephemeral' } }] },
      'messages[0].cache_control',
    );
    const tool = {
      type: 'function',
      function: { name: 'f', parameters: { type: 'object' } },
      cache_control: { type: 'ephemeral' },
    };
    await refused(key, '/chat/completions', { ...chat, tools: [tool] }, 'tools[0].cache_control');
  });

  it('serves the standard tiers, forwarded as asked', async () => {
    const { key } = await account(100);
    for (const tier of ['default', 'auto']) {
      const response = await call(key, '/chat/completions', { ...chat, service_tier: tier });
      expect(response.status).toBe(200);
      expect(openai.requests.at(-1)?.body).toMatchObject({ service_tier: tier });
    }
  });

  it('refuses built-in tools billed per call, naming tools[i].type', async () => {
    const { key } = await account(100);
    const fn = { type: 'function', function: { name: 'lookup', parameters: { type: 'object' } } };
    for (const type of ['web_search_preview', 'code_interpreter', 'file_search', 'browser_search'])
      await refused(key, '/chat/completions', { ...chat, tools: [fn, { type }] }, 'tools[1].type');
    // A custom tool costs tokens, but only the OpenAI format carries it.
    const custom = { type: 'custom', custom: { name: 'patch' } };
    await refused(
      key,
      '/chat/completions',
      { ...chat, model: 'anthropic/claude-sonnet-4-5', tools: [custom] },
      'tools[0].type',
    );
    const served = await call(key, '/chat/completions', { ...chat, tools: [fn, custom] });
    expect(served.status).toBe(200);
    expect(openai.requests.at(-1)?.body).toMatchObject({ tools: [fn, custom] });
  });

  it('refuses an unknown top-level field by name, as OpenAI does, on any model', async () => {
    const { key } = await account(100);
    for (const field of ['search_parameters', 'extra_body', 'top_k', 'plugins'])
      await refused(key, '/chat/completions', { ...chat, [field]: { mode: 'on' } }, field);
    await refused(key, '/chat/completions', { ...chat, model: 'local/echo', reasoning: {} }, 'reasoning');
    // Streamed or not, through the route's schema: the refusal comes before the response cache, too.
    await refused(key, '/chat/completions', { ...chat, stream: true, cache: 'force', foo: 1 }, 'foo');
  });
});

describe('input the hold must count', () => {
  const predicted = { ...chat, prediction: { type: 'content', content: PREDICTION } };

  it('holds a prediction as input and as rejected output, and charges it within the hold', async () => {
    const { account_id, key } = await account(100);
    const asInput = await call(key, '/chat/completions', {
      ...chat,
      messages: [{ role: 'user', content: PREDICTION }],
    });
    expect(asInput.status).toBe(200);
    const withPrediction = await call(key, '/chat/completions', predicted);
    expect(withPrediction.status).toBe(200);
    expect(openai.requests.at(-1)?.body).toMatchObject({ prediction: predicted.prediction });
    const [inputHold, predictionHold] = await Promise.all([
      heldFor(account_id, asInput.headers.get('x-request-id')),
      heldFor(account_id, withPrediction.headers.get('x-request-id')),
    ]);
    // Counted as input once more, and as output: well above the same text sent as a message.
    expect(predictionHold).toBeGreaterThan(inputHold * 3n);
    // The provider billed every predicted word it rejected as output; the charge is that usage, within the hold.
    const { usage } = await json(withPrediction);
    expect(usage.completion_tokens_details.rejected_prediction_tokens).toBeGreaterThan(10_000);
    const model = buildCatalog().get('openai/gpt-4o-mini');
    if (!model) throw new Error('catalog lacks openai/gpt-4o-mini');
    const charged = chatCharge(model, tokensOnly(usage.prompt_tokens, usage.completion_tokens)).chargedNanos;
    expect(withPrediction.headers.get('x-cost-cents')).toBe(String(nanosToCents(charged)));
    expect(charged).toBeLessThanOrEqual(predictionHold);
    expect(await overrunsOf(account_id)).toBe(0);
  });

  it('refuses a large prediction with 402 under a small cap, and sends nothing', async () => {
    const { key } = await account(1_000);
    const sub = await json(await call(key, '/sub-accounts', { name: 'small', spend_cap_cents: 1 }));
    const before = openai.requests.length;
    const response = await call(sub.key, '/chat/completions', predicted);
    expect(response.status).toBe(402);
    expect(openai.requests.length).toBe(before);
    expect((await call(sub.key, '/chat/completions', chat)).status).toBe(200);
  });

  const instruct = 'openai/gpt-3.5-turbo-instruct';

  it('holds a legacy suffix as input, as large as the same text as the prompt', async () => {
    const { account_id, key } = await account(100);
    const asPrompt = await call(key, '/completions', { model: instruct, prompt: LARGE, max_tokens: 5 });
    const asSuffix = await call(key, '/completions', {
      model: instruct,
      prompt: 'def f():',
      suffix: LARGE,
      max_tokens: 5,
    });
    expect([asPrompt.status, asSuffix.status]).toEqual([200, 200]);
    expect(openai.requests.at(-1)?.body).toMatchObject({ suffix: LARGE });
    const [promptHold, suffixHold] = await Promise.all([
      heldFor(account_id, asPrompt.headers.get('x-request-id')),
      heldFor(account_id, asSuffix.headers.get('x-request-id')),
    ]);
    expect(promptHold).toBeGreaterThan(10_000_000n); // a cent and more: 6,751 tokens at $1.50 a million
    expect(suffixHold).toBeGreaterThanOrEqual(promptHold);
  });

  it('refuses a large suffix with 402 under a small cap, and an unknown completions field with 400', async () => {
    const { key } = await account(1_000);
    const sub = await json(await call(key, '/sub-accounts', { name: 'small', spend_cap_cents: 1 }));
    const before = openai.requests.length;
    const body = { model: instruct, prompt: 'def f():', suffix: LARGE, max_tokens: 5 };
    expect((await call(sub.key, '/completions', body)).status).toBe(402);
    expect(openai.requests.length).toBe(before);
    await refused(
      key,
      '/completions',
      { model: instruct, prompt: 'x', service_tier: 'priority' },
      'service_tier',
    );
    // A suffix counts towards the context window too, named as the legacy request names its input.
    await refused(key, '/completions', { model: instruct, prompt: 'x', suffix: LARGE.repeat(3) }, 'prompt');
  });
});

describe('/v1/messages, sent to Anthropic as it came', () => {
  const message = {
    model: 'anthropic/claude-sonnet-4-5',
    max_tokens: 16,
    messages: [{ role: 'user', content: 'hi' }],
  };

  it('refuses what Anthropic bills beyond tokens, and unknown fields, by name, sending nothing', async () => {
    const { key } = await account(100);
    const oneHour = { type: 'ephemeral', ttl: '1h' };
    for (const [extra, field] of [
      [{ speed: 'fast' }, 'speed'],
      [{ inference_geo: 'us' }, 'inference_geo'],
      [{ container: 'container_1' }, 'container'],
      [{ service_tier: 'priority' }, 'service_tier'],
      [{ mcp_servers: [{ type: 'url', url: 'https://mcp.example.com', name: 'x' }] }, 'mcp_servers'],
      [{ context_management: { edits: [] } }, 'context_management'],
      [{ cache_control: oneHour }, 'cache_control.ttl'],
      [{ system: [{ type: 'text', text: 'terse', cache_control: oneHour }] }, 'system.0.cache_control.ttl'],
    ] as const) {
      const before = anthropic.requests.length;
      const response = await call(key, '/messages', { ...message, ...extra });
      const body = await json(response);
      expect({ status: response.status, field }).toEqual({ status: 400, field });
      expect(body.error.message).toContain(`'${field}'`);
      expect(anthropic.requests.length).toBe(before);
    }
  });

  it('forwards the fields that cost tokens alone', async () => {
    const { key } = await account(100);
    const extra = {
      service_tier: 'standard_only',
      cache_control: { type: 'ephemeral', ttl: '5m' },
      top_k: 5,
      metadata: { user_id: 'u-1' },
    };
    const response = await call(key, '/messages', { ...message, ...extra });
    expect(response.status).toBe(200);
    expect(anthropic.requests.at(-1)?.body).toMatchObject(extra);
  });
});
