import { randomBytes } from 'node:crypto';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, startTestGateway, type TestGateway } from '../support/gateway.ts';
import { json } from '../support/json.ts';

// No provider configured: the router chooses between the built-in local/echo (cheap) and local/echo-pro (dear,
// the better stand-in quality), so `cost` and `quality` choose different models for the same request.
let gateway: TestGateway;
let key: string;
let client: OpenAI;

const CHEAP = 'local/echo';
const DEAR = 'local/echo-pro';
const fresh = (text: string) => `${text} ${randomBytes(4).toString('hex')}`;

beforeAll(async () => {
  gateway = await startTestGateway();
  const account = await json(await gateway.admin('/accounts', { name: 'routed cache' }));
  key = account.key;
  await gateway.admin(`/accounts/${account.account_id}/top-ups`, { cents: 1000, reference: 'p' });
  client = new OpenAI({ apiKey: key, baseURL: `${gateway.url}/v1`, maxRetries: 0 });
});
afterAll(async () => {
  await gateway?.close();
});

/** A routed request through the SDK, and the headers that say what the router and the cache did. */
async function routedRequest(strategy: string, body: Record<string, unknown>) {
  const { data, response } = await client.chat.completions
    .create({ model: 'auto', ...body } as never, { headers: { 'x-routing': strategy } })
    .withResponse();
  const header = (name: string) => response.headers.get(name);
  return {
    data: data as OpenAI.ChatCompletion,
    id: header('x-request-id') as string,
    cache: header('x-cache-status'),
    model: header('x-model'),
    routing: {
      strategy: header('x-routing-strategy'),
      model: header('x-routing-model'),
      reason: header('x-routing-reason'),
      baseline: header('x-auto-baseline-model'),
    },
    saved: header('x-auto-saved-usd'),
  };
}

describe('a routed request and the cache', () => {
  it('is keyed by the model the router chose: a strategy or baseline that chooses another model misses', async () => {
    const body = {
      temperature: 0,
      messages: [{ role: 'user', content: fresh('Which river runs through Rome?') }],
    };
    const best = await routedRequest('quality', body);
    expect(best.cache).toBe('miss');
    expect(best.routing).toEqual({
      strategy: 'quality',
      model: DEAR,
      reason: 'best-quality',
      baseline: DEAR,
    });

    // A baseline the quality pick would exceed changes the choice: not answered by the dear model's entry.
    const capped = await routedRequest('quality', { ...body, baseline_model: CHEAP });
    expect(capped.cache).toBe('miss');
    expect(capped.model).toBe(CHEAP);
    expect(capped.routing).toEqual({
      strategy: 'quality',
      model: CHEAP,
      reason: 'best-quality',
      baseline: CHEAP,
    });

    // cost chooses the same model as the capped request: its entry answers, with cost's own decision.
    const cheapest = await routedRequest('cost', body);
    expect(cheapest.cache).toBe('hit; type=exact');
    expect(cheapest.model).toBe(CHEAP);
    expect(cheapest.routing).toEqual({ strategy: 'cost', model: CHEAP, reason: 'cheapest', baseline: DEAR });
    expect(cheapest.data.choices[0]?.message.content).toBe(capped.data.choices[0]?.message.content);
    // The hit's saving against the quality pick, at the cache discount on both sides.
    expect(Number(cheapest.saved)).toBeGreaterThan(0);

    // quality again: its own entry, with the headers of this decision (the conversation kept its model).
    const again = await routedRequest('quality', body);
    expect(again.cache).toBe('hit; type=exact');
    expect(again.model).toBe(DEAR);
    expect(again.routing).toMatchObject({ strategy: 'quality', model: DEAR, reason: 'conversation' });

    const record = await eventually(
      async () =>
        json(
          await fetch(`${gateway.url}/v1/requests/${cheapest.id}`, {
            headers: { authorization: `Bearer ${key}` },
          }),
        ),
      (r) => r.id === cheapest.id,
      3000,
    );
    expect(record.cache_status).toBe('hit; type=exact');
    expect(record.cache.hit.source_request_id).toBe(capped.id);
    expect(record.routing).toMatchObject({ strategy: 'cost', chosen: CHEAP, reason: 'cheapest' });
    expect(BigInt(record.routing.saved_nanos)).toBeGreaterThan(0n);
  });

  it('replays a routed hit as a stream with its decision’s headers and its saving in the usage chunk', async () => {
    const body = {
      temperature: 0,
      messages: [{ role: 'user', content: fresh('Name a port on the Baltic') }],
    };
    await routedRequest('cost', body);
    const { data: stream, response } = await client.chat.completions
      .create(
        { model: 'auto/text', ...body, stream: true, stream_options: { include_usage: true } } as never,
        { headers: { 'x-routing': 'cost' } },
      )
      .withResponse();
    let saved: string | undefined;
    for await (const chunk of stream as unknown as AsyncIterable<OpenAI.ChatCompletionChunk>) {
      const usage = chunk.usage as { saved_usd?: string } | null | undefined;
      if (usage?.saved_usd) saved = usage.saved_usd;
    }
    expect(response.headers.get('x-cache-status')).toBe('hit; type=exact');
    expect(response.headers.get('x-routing-model')).toBe(CHEAP);
    expect(response.headers.get('x-routing-strategy')).toBe('cost');
    expect(Number(saved)).toBeGreaterThan(0);
  });
});

describe('the router’s conversation memory', () => {
  it('keeps a model for the same routing question only: another strategy or baseline is a new decision', async () => {
    // The cache stays out of it: only the router answers for the headers.
    const routed = (strategy: string, body: Record<string, unknown>) =>
      routedRequest(strategy, { ...body, cache: 'skip' });
    const opening = [{ role: 'user', content: fresh('Hello, who are you?') }];
    expect((await routed('cost', { messages: opening })).routing).toMatchObject({
      model: CHEAP,
      reason: 'cheapest',
    });
    expect((await routed('quality', { messages: opening })).routing).toMatchObject({
      model: DEAR,
      reason: 'best-quality',
    });
    expect((await routed('speed', { messages: opening })).routing.reason).toBe('fastest');
    expect((await routed('auto', { messages: opening })).routing.reason).toMatch(/^complexity /);
    expect((await routed('cost', { messages: opening, baseline_model: DEAR })).routing.reason).toBe(
      'cheapest',
    );

    // The next turn of the quality conversation keeps the quality pick.
    const next = [
      ...opening,
      { role: 'assistant', content: 'An echo.' },
      { role: 'user', content: 'And then?' },
    ];
    expect((await routed('quality', { messages: next })).routing).toMatchObject({
      model: DEAR,
      reason: 'conversation',
    });
    expect((await routed('cost', { messages: next })).routing).toMatchObject({
      model: CHEAP,
      reason: 'conversation',
    });
  });
});
