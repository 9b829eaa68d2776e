import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { budgetStream, monthOf } from '../../events/budget.ts';
import { CATALOG_STREAM } from '../../events/catalog.ts';
import { eventually, startTestGateway, type TestGateway } from '../support/gateway.ts';
import { type Json, json } from '../support/json.ts';
import { startAnthropicUpstream } from '../upstreams/anthropic.ts';
import { startGeminiUpstream } from '../upstreams/gemini.ts';
import { startOpenAiUpstream } from '../upstreams/openai.ts';
import type { Upstream } from '../upstreams/types.ts';
import { adminPost, type Receiver, startReceiver, until } from '../webhooks/support.ts';

// Availability from the providers' own model lists (docs/providers.md#availability), and provider-less ids from
// the providers' own examples (docs/clients.md). Each simulator lists a few models, as a real key's list would.
const OPENAI = ['gpt-4o-mini', 'gpt-5-mini', 'text-embedding-3-small', 'omni-moderation-latest'];
// Anthropic lists snapshots; the aliases the price list names (claude-sonnet-4-5) are served through them.
const ANTHROPIC = ['claude-sonnet-4-5-20250929', 'claude-haiku-4-5-20251001'];
const GEMINI = ['gemini-2.5-flash', 'gemini-embedding-001'];
// Another provider serving a model of OpenAI's make, and one OpenAI's list leaves out.
const COPILOT = ['gpt-5-mini', 'gpt-5.4-mini'];
const OFFERED = [
  'openai/gpt-4o-mini',
  'openai/gpt-5-mini',
  'openai/text-embedding-3-small',
  'openai/omni-moderation-latest',
  'anthropic/claude-sonnet-4-5',
  'anthropic/claude-haiku-4-5',
  'google/gemini-2.5-flash',
  'google/gemini-embedding-001',
  'github-copilot/gpt-5-mini',
  'github-copilot/gpt-5.4-mini',
];

let openai: Upstream;
let copilot: Upstream;
let anthropic: Upstream;
let gemini: Upstream;
let gateway: TestGateway;
let receiver: Receiver;
let key: string;
let accountId: string;

const gatewayEnv = () => ({
  OPENAI_API_KEY: 'sk-upstream-openai',
  OPENAI_BASE_URL: `${openai.url}/v1`,
  GITHUB_COPILOT_API_KEY: 'gh-upstream',
  GITHUB_COPILOT_BASE_URL: `${copilot.url}/v1`,
  ANTHROPIC_API_KEY: 'sk-upstream-anthropic',
  ANTHROPIC_BASE_URL: anthropic.url,
  GOOGLE_API_KEY: 'upstream-google',
  GOOGLE_BASE_URL: gemini.url,
  // A provider whose address answers no model list: its models stay available on its key alone (and are not
  // routed: they have no quality figure).
  NOVITA_API_KEY: 'sk-upstream-novita',
  NOVITA_BASE_URL: `${gemini.url}/no-list`,
  GATEWAY_MODEL_LIST_INTERVAL_MS: '100',
  GATEWAY_ALLOW_PRIVATE_URLS: 'true',
});

beforeAll(async () => {
  [openai, copilot, anthropic, gemini, receiver] = await Promise.all([
    startOpenAiUpstream(),
    startOpenAiUpstream(),
    startAnthropicUpstream(),
    startGeminiUpstream(),
    startReceiver(),
  ]);
  openai.models?.offer(OPENAI);
  copilot.models?.offer(COPILOT);
  anthropic.models?.offer(ANTHROPIC);
  gemini.models?.offer(GEMINI);
  gateway = await startTestGateway(gatewayEnv(), { workerIntervalsMs: { webhooks: 20 } });
  const account = await json(await gateway.admin('/accounts', { name: 'model lists' }));
  key = account.key;
  accountId = account.account_id;
  await gateway.admin(`/accounts/${accountId}/top-ups`, { cents: 10_000, reference: 'funding' });
  await adminPost(gateway.url, gateway.adminToken, `/accounts/${accountId}/webhook-endpoint`, {
    url: receiver.url,
  });
});
afterAll(async () => {
  await gateway?.close();
  await Promise.all([openai, copilot, anthropic, gemini, receiver].map((u) => u?.close()));
});

const client = () => new OpenAI({ apiKey: key, baseURL: `${gateway.url}/v1`, maxRetries: 0 });
const get = async (path: string) =>
  json(await fetch(`${gateway.url}/v1${path}`, { headers: { authorization: `Bearer ${key}` } }));
const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${gateway.url}/v1${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
const say = (content: string) => [{ role: 'user' as const, content }];
const listedIds = async () => {
  const ids: string[] = [];
  for await (const model of client().models.list()) ids.push(model.id);
  return ids;
};
const upstreamCalls = () => [openai, copilot, anthropic, gemini].reduce((n, u) => n + u.requests.length, 0);

describe('what GET /v1/models lists', () => {
  it('is by default what the providers’ lists offer (and the keyless local models), through the SDK', async () => {
    const ids = await listedIds();
    const hosted = ids.filter((id) => !id.startsWith('local/') && !id.startsWith('novita/'));
    expect(hosted.sort()).toEqual(expect.arrayContaining(OFFERED));
    expect(hosted.filter((id) => !OFFERED.includes(id))).toEqual(['openai/moderation']);
    expect(ids).not.toContain('openai/davinci');
    // A model Anthropic serves through the snapshot its list names.
    const record = await client().models.retrieve('anthropic/claude-sonnet-4-5');
    expect(record).toMatchObject({ available: true, availability_reason: null });
  });

  it('keeps the whole catalog one parameter away, saying why a model is not served', async () => {
    const all = (await get('/models?all=true')).data as Json[];
    expect(all.length).toBeGreaterThan(1000);
    const byId = new Map(all.map((m) => [m.id, m]));
    for (const id of [
      'openai/davinci',
      'openai/gpt-3.5-turbo',
      'anthropic/claude-2',
      'anthropic/claude-v1',
    ]) {
      expect(byId.get(id)?.available).toBe(false);
    }
    expect(byId.get('openai/davinci').availability_reason).toMatch(
      /^openai does not offer 'davinci' to this gateway's key \(its model list, fetched .*, does not name it\)$/,
    );
    expect(byId.get('google/gemini-2.0-flash').availability_reason).toMatch(
      /google does not offer 'gemini-2.0-flash'/,
    );
    expect(byId.get('x-ai/grok-3')?.availability_reason).toBe('set X_AI_API_KEY');
    // No list known for Novita (its address answers none): its key is the rule, as before any list.
    expect(byId.get('novita/deepseek/deepseek-r1')).toMatchObject({
      available: true,
      availability_reason: null,
    });
  });
});

describe('a catalog model its provider does not list', () => {
  it.each([
    ['openai/davinci', 'davinci'],
    ['openai/gpt-3.5-turbo', 'gpt-3.5-turbo'],
    ['anthropic/claude-2', 'claude-2'],
    ['google/gemini-2.0-flash', 'gemini-2.0-flash'],
  ])('is refused with 404 before anything is held or sent: %s', async (model, upstreamId) => {
    const before = upstreamCalls();
    const response = await post('/chat/completions', { model, messages: say('hello') });
    expect(response.status).toBe(404);
    const { error } = await json(response);
    expect(error).toMatchObject({ type: 'model_not_found', code: 404, param: 'model' });
    expect(error.message).toContain(`'model': ${model} is not available on this gateway`);
    expect(error.message).toContain(`does not offer '${upstreamId}'`);
    expect(upstreamCalls()).toBe(before);
    const requestId = response.headers.get('x-request-id');
    const budget = await gateway.runtime.store.readStream(budgetStream(accountId, monthOf(new Date())));
    // Its record in the log names no hold, and no hold was ever taken for it.
    const ofRequest = budget.filter((e) => (e.data as { requestId?: string }).requestId === requestId);
    expect(ofRequest.filter((e) => e.type.startsWith('Spend')).map((e) => e.type)).toEqual([]);
    expect(ofRequest.every((e) => (e.data as { holdId?: unknown }).holdId == null)).toBe(true);
  });

  it('is refused in Anthropic’s envelope on /v1/messages, and on the other endpoints', async () => {
    const messages = await post('/messages', {
      model: 'anthropic/claude-v1',
      max_tokens: 8,
      messages: say('x'),
    });
    expect(messages.status).toBe(404);
    expect(await json(messages)).toMatchObject({ type: 'error', error: { type: 'model_not_found' } });
    const embeddings = await post('/embeddings', { model: 'openai/text-embedding-ada-002', input: 'x' });
    expect(embeddings.status).toBe(404);
    expect((await json(embeddings)).error.message).toContain("does not offer 'text-embedding-ada-002'");
  });

  it('is never routed: every strategy chooses among the offered models', async () => {
    for (const strategy of ['cost', 'speed', 'quality', 'auto']) {
      const response = await post(
        '/routing/preview',
        { model: 'auto', messages: say('hi') },
        { 'x-routing': strategy },
      );
      expect(response.status).toBe(200);
      const decision = await json(response);
      const considered = [decision.chosen, ...decision.candidates.map((c: Json) => c.model)];
      expect(considered.filter((id: string) => !OFFERED.includes(id))).toEqual([]);
    }
    const quality = await json(
      await post('/routing/preview', { model: 'auto', messages: say('hi') }, { 'x-routing': 'quality' }),
    );
    expect(quality.chosen).toBe('anthropic/claude-sonnet-4-5');
  });

  it('an offered one is served, an Anthropic alias through its listed snapshot', async () => {
    const answer = await client().chat.completions.create({
      model: 'anthropic/claude-sonnet-4-5',
      messages: say('hello'),
    });
    expect(answer.choices[0]?.message.content).toBe('echo: hello');
  });
});

describe('provider-less ids from the providers’ own examples', () => {
  it('resolve to the maker’s model when its provider serves it, else to the one provider that does', async () => {
    // github-copilot/gpt-5-mini is servable too: OpenAI made it, so OpenAI's is meant.
    const mini = await client()
      .chat.completions.create({ model: 'gpt-5-mini', messages: say('hi') })
      .withResponse();
    expect(mini.response.headers.get('x-model')).toBe('openai/gpt-5-mini');
    // OpenAI's list does not offer gpt-5.4-mini: the one provider serving it is.
    const other = await client().chat.completions.create({ model: 'gpt-5.4-mini', messages: say('hi') });
    expect(other.model).toBe('github-copilot/gpt-5.4-mini');
    const claude = await client().chat.completions.create({
      model: 'claude-sonnet-4-5',
      messages: say('hi'),
    });
    expect(claude.model).toBe('anthropic/claude-sonnet-4-5');
    const flash = await client().chat.completions.create({ model: 'gemini-2.5-flash', messages: say('hi') });
    expect(flash.model).toBe('google/gemini-2.5-flash');
  });

  it('work with Anthropic’s SDK given the /v1 base address (it calls /v1/v1/messages)', async () => {
    const sdk = new Anthropic({ apiKey: key, baseURL: `${gateway.url}/v1`, maxRetries: 0 });
    const message = await sdk.messages.create({
      model: 'claude-sonnet-4-5',
      max_tokens: 32,
      messages: say('hi'),
    });
    expect(message).toMatchObject({ model: 'anthropic/claude-sonnet-4-5', content: [{ text: 'echo: hi' }] });
    const counted = await sdk.messages.countTokens({ model: 'claude-sonnet-4-5', messages: say('hi there') });
    expect(counted.input_tokens).toBeGreaterThan(0);
    const streamed = await sdk.messages.stream({
      model: 'claude-haiku-4-5',
      max_tokens: 32,
      messages: say('yo'),
    });
    expect((await streamed.finalMessage()).content).toEqual([{ type: 'text', text: 'echo: yo' }]);
  });
});

describe('when a provider’s list changes or cannot be fetched', () => {
  const events = () =>
    receiver.received.map((r) => JSON.parse(r.body) as { type: string; data: { id: string } });

  it('a model the provider starts listing is served, routed and announced as model.added within a tick', async () => {
    openai.models?.offer([...OPENAI, 'gpt-5.5']);
    const added = await until(events, (all) => all.some((e) => e.type === 'model.added'), 10_000);
    expect(added.filter((e) => e.type === 'model.added')).toEqual([
      expect.objectContaining({
        data: { id: 'openai/gpt-5.5', provider: 'openai', modality: 'text', name: expect.any(String) },
      }),
    ]);
    expect(await listedIds()).toContain('openai/gpt-5.5');
    const quality = await json(
      await post('/routing/preview', { model: 'auto', messages: say('hi') }, { 'x-routing': 'quality' }),
    );
    expect(quality.chosen).toBe('openai/gpt-5.5');
  });

  it('one it stops listing is refused, no longer routed, and announced as model.deprecated', async () => {
    openai.models?.offer(OPENAI);
    const gone = await until(events, (all) => all.some((e) => e.type === 'model.deprecated'), 10_000);
    expect(gone.filter((e) => e.type === 'model.deprecated').map((e) => e.data.id)).toEqual([
      'openai/gpt-5.5',
    ]);
    const refused = await post('/chat/completions', { model: 'openai/gpt-5.5', messages: say('hi') });
    expect(refused.status).toBe(404);
    const quality = await json(
      await post('/routing/preview', { model: 'auto', messages: say('hi') }, { 'x-routing': 'quality' }),
    );
    expect(quality.chosen).toBe('anthropic/claude-sonnet-4-5');
    // Each change was announced once, however many rounds saw it.
    expect(events().map((e) => `${e.type} ${e.data.id}`)).toEqual([
      'model.added openai/gpt-5.5',
      'model.deprecated openai/gpt-5.5',
    ]);
  });

  it('a failed list keeps the last one known, and /v1/health/providers says so', async () => {
    openai.models?.fail(503);
    const failing = await eventually(
      async () => ((await get('/health/providers')).data as Json[]).find((p) => p.provider === 'openai'),
      (row) => row?.model_list?.status === 'failing',
      10_000,
    );
    expect(failing?.model_list).toMatchObject({
      status: 'failing',
      models: OPENAI.length,
      fetched_at: expect.any(String),
      error: expect.stringContaining('503'),
      failed_at: expect.any(String),
    });
    expect(await listedIds()).toContain('openai/gpt-4o-mini');
    expect((await post('/chat/completions', { model: 'openai/davinci', messages: say('x') })).status).toBe(
      404,
    );
    const novita = ((await get('/health/providers')).data as Json[]).find((p) => p.provider === 'novita');
    expect(novita?.model_list).toMatchObject({ status: 'failing', models: null, fetched_at: null });
    openai.models?.fail();
    await eventually(
      async () => ((await get('/health/providers')).data as Json[]).find((p) => p.provider === 'openai'),
      (row) => row?.model_list?.status === 'ok',
      10_000,
    );
    // A failure and its recovery change no list: nothing was announced.
    expect(events()).toHaveLength(2);
  });

  it('two instances over one store announce a change once', async () => {
    const second = await startTestGateway(
      { ...gatewayEnv(), GATEWAY_MODEL_LIST_INTERVAL_MS: '0' },
      { schema: gateway.env.GATEWAY_DB_SCHEMA, workerIntervalsMs: { webhooks: 20 } },
    );
    try {
      openai.models?.offer([...OPENAI, 'gpt-4.1']);
      // Two rounds each: the second begins after the change, whatever the first saw.
      for (const instance of [second, gateway, second, gateway]) await instance.runtime.modelLists.refresh();
      const snapshots = await gateway.runtime.store.readStream(CATALOG_STREAM);
      const announced = snapshots.flatMap((e) =>
        (e.data as { added: { id: string }[] }).added.map((m) => m.id),
      );
      expect(announced.filter((id) => id === 'openai/gpt-4.1')).toEqual(['openai/gpt-4.1']);
      await until(events, (all) => all.length === 3);
      expect(events().at(-1)).toMatchObject({ type: 'model.added', data: { id: 'openai/gpt-4.1' } });
    } finally {
      await second.close();
    }
  });
});
