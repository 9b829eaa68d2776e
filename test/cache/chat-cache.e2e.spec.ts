import { randomBytes } from 'node:crypto';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ResponseCache } from '../../src/cache/cache.ts';
import { runCli } from '../support/cli.ts';
import { eventually, startTestGateway, type TestGateway } from '../support/gateway.ts';
import { json } from '../support/json.ts';
import { startOpenAiUpstream } from '../upstreams/openai.ts';
import type { Upstream } from '../upstreams/types.ts';

let openai: Upstream;
let gateway: TestGateway;
let accountId: string;
let key: string;
let client: OpenAI;

const MODEL = 'openai/gpt-4o-mini';
const fresh = (text: string) => `${text} ${randomBytes(4).toString('hex')}`;
const call = (method: string, path: string, apiKey: string, body?: unknown) =>
  fetch(`${gateway.url}/v1${path}`, {
    method,
    headers: {
      authorization: `Bearer ${apiKey}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
const sdk = (apiKey: string) => new OpenAI({ apiKey, baseURL: `${gateway.url}/v1`, maxRetries: 0 });
const upstreamCalls = () => openai.requests.filter((r) => r.path === '/v1/chat/completions').length;
/** Half of a charge in cents as the ledger rounds it: up, to the nano-dollar. */
const half = (cents: number) => Math.ceil(Math.round(cents * 1e7) / 2) / 1e7;

async function usageOf(tag: string, apiKey = key) {
  const report = await eventually(
    async () => json(await call('GET', '/usage/by-tag', apiKey)),
    (u) => u.data.some((row: { tag: string; requests: number }) => row.tag === tag && row.requests >= 2),
    3000,
  );
  return report.data.find((row: { tag: string }) => row.tag === tag);
}

beforeAll(async () => {
  openai = await startOpenAiUpstream();
  gateway = await startTestGateway({ OPENAI_API_KEY: 'sk-upstream', OPENAI_BASE_URL: `${openai.url}/v1` });
  const account = await json(await gateway.admin('/accounts', { name: 'cached' }));
  accountId = account.account_id;
  key = account.key;
  await gateway.admin(`/accounts/${accountId}/top-ups`, { cents: 1000, reference: 'p' });
  client = sdk(key);
});
afterAll(async () => {
  await gateway?.close();
  await openai?.close();
});

describe('the exact cache of chat completions', () => {
  it('serves a repeated request from the cache at half the charge, and the usage report shows both', async () => {
    const tag = fresh('repeat');
    const body = {
      model: MODEL,
      temperature: 0,
      messages: [{ role: 'user' as const, content: fresh('What is a cache?') }],
    };
    const first = await client.chat.completions.create(body, { headers: { 'x-gw-tag': tag } }).withResponse();
    expect(first.response.headers.get('x-cache-status')).toBe('miss');
    expect(first.response.headers.get('cache-status')).toBe('gateway; fwd=uri-miss');
    const before = upstreamCalls();
    const second = await client.chat.completions
      .create(body, { headers: { 'x-gw-tag': tag } })
      .withResponse();
    expect(upstreamCalls()).toBe(before);
    expect(second.response.headers.get('x-cache-status')).toBe('hit; type=exact');
    expect(second.response.headers.get('cache-status')).toMatch(/^gateway; hit; ttl=\d+; detail=exact$/);
    expect(second.response.headers.get('x-model')).toBe(MODEL);
    expect(second.response.headers.get('x-provider')).toBe('openai');
    expect(second.data.choices[0]?.message.content).toBe(first.data.choices[0]?.message.content);
    expect(second.data.usage?.completion_tokens).toBe(first.data.usage?.completion_tokens);
    expect(second.data.id).not.toBe(first.data.id);
    const cost = Number(first.response.headers.get('x-cost-cents'));
    expect(cost).toBeGreaterThan(0);
    expect(Number(second.response.headers.get('x-cost-cents'))).toBe(half(cost));
    const row = await usageOf(tag);
    expect(row.requests).toBe(2);
    expect(row.cost_cents).toBeCloseTo(cost + half(cost), 7);
  });

  it('records the hit in the request log: its type, the entry, the source request and the saving', async () => {
    const body = { model: MODEL, seed: 1, messages: [{ role: 'user' as const, content: fresh('Log me') }] };
    const first = await client.chat.completions.create(body).withResponse();
    const second = await client.chat.completions.create(body).withResponse();
    const id = second.response.headers.get('x-request-id') as string;
    const record = await eventually(
      async () => json(await call('GET', `/requests/${id}`, key)),
      (r) => r.id === id,
      3000,
    );
    expect(record.cache_status).toBe('hit; type=exact');
    expect(record.model).toBe(MODEL);
    expect(record.cost_cents).toBe(Number(second.response.headers.get('x-cost-cents')));
    expect(record.cache.hit).toMatchObject({
      type: 'exact',
      source_request_id: first.response.headers.get('x-request-id'),
      similarity: null,
    });
    expect(record.cache.hit.entry_id).toMatch(/^ce_/);
    expect(record.cache.hit.saved_cents).toBeGreaterThan(0);
    const firstRecord = await eventually(
      async () => json(await call('GET', `/requests/${first.response.headers.get('x-request-id')}`, key)),
      (r) => r.cache_status !== undefined,
      3000,
    );
    expect(firstRecord.cache_status).toBe('miss');
  });

  it('replays a plain answer as a stream of chunks, with the usage and the half charge at the end', async () => {
    const content = fresh('Tell me about streams and rivers and the sea');
    const plain = await client.chat.completions.create({
      model: MODEL,
      temperature: 0,
      messages: [{ role: 'user', content }],
    });
    const before = upstreamCalls();
    const { data: stream, response } = await client.chat.completions
      .create({
        model: MODEL,
        temperature: 0,
        messages: [{ role: 'user', content }],
        stream: true,
        stream_options: { include_usage: true },
      })
      .withResponse();
    expect(response.headers.get('x-cache-status')).toBe('hit; type=exact');
    let text = '';
    let chunks = 0;
    let finish: string | null | undefined;
    let usage: (OpenAI.CompletionUsage & { cost_cents?: number }) | undefined;
    for await (const chunk of stream) {
      chunks += 1;
      text += chunk.choices[0]?.delta.content ?? '';
      finish = chunk.choices[0]?.finish_reason ?? finish;
      if (chunk.usage) usage = chunk.usage;
    }
    expect(upstreamCalls()).toBe(before);
    expect(text).toBe(plain.choices[0]?.message.content);
    expect(chunks).toBeGreaterThan(3);
    expect(finish).toBe('stop');
    expect(usage?.completion_tokens).toBe(plain.usage?.completion_tokens);
    expect(usage?.cost_cents).toBeGreaterThan(0);
  });

  it('serves a streamed answer again to a plain request', async () => {
    const content = fresh('A streamed question');
    const stream = await client.chat.completions.create({
      model: MODEL,
      temperature: 0,
      messages: [{ role: 'user', content }],
      stream: true,
    });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
    const { data, response } = await client.chat.completions
      .create({ model: MODEL, temperature: 0, messages: [{ role: 'user', content }] })
      .withResponse();
    expect(response.headers.get('x-cache-status')).toBe('hit; type=exact');
    expect(data.choices[0]?.message.content).toBe(text);
  });

  it('misses on another system prompt, another tool, another temperature, and skips a random one in auto', async () => {
    const question = fresh('Which is it?');
    const base = { model: MODEL, temperature: 0, messages: [{ role: 'user' as const, content: question }] };
    await client.chat.completions.create(base);
    const status = async (body: OpenAI.ChatCompletionCreateParamsNonStreaming) =>
      (await client.chat.completions.create(body).withResponse()).response.headers.get('x-cache-status');
    expect(await status(base)).toBe('hit; type=exact');
    expect(
      await status({ ...base, messages: [{ role: 'system', content: 'Be brief.' }, ...base.messages] }),
    ).toBe('miss');
    const tool = (name: string): OpenAI.ChatCompletionTool => ({
      type: 'function',
      function: { name, parameters: { type: 'object', properties: {} } },
    });
    expect(await status({ ...base, tools: [tool('lookup')], tool_choice: 'none' })).toBe('miss');
    expect(await status({ ...base, tools: [tool('search')], tool_choice: 'none' })).toBe('miss');
    expect(await status({ ...base, temperature: 0, seed: 7 })).toBe('miss');
    expect(await status({ ...base, temperature: 0.7 })).toBe('skip');
    expect(await status({ ...base, temperature: 0.7 })).toBe('skip');
    expect(await status({ ...base, temperature: 0.7, seed: 7 })).toBe('miss');
    expect(await status({ ...base, temperature: 0.7, seed: 7 })).toBe('hit; type=exact');
    expect(await status({ ...base, max_tokens: 50 })).toBe('miss');
  });

  it('force stores and serves whatever the temperature; skip neither looks up nor stores', async () => {
    const content = fresh('Be creative');
    const body = { model: MODEL, temperature: 1.2, messages: [{ role: 'user' as const, content }] };
    const forced = (b: object) =>
      client.chat.completions
        .create({ ...body, ...b } as OpenAI.ChatCompletionCreateParamsNonStreaming)
        .withResponse();
    expect((await forced({ cache: 'force' })).response.headers.get('x-cache-status')).toBe('miss');
    expect((await forced({ cache: 'force' })).response.headers.get('x-cache-status')).toBe('hit; type=exact');
    const skipped = await forced({ cache: 'skip' });
    expect(skipped.response.headers.get('x-cache-status')).toBe('skip');
    expect(skipped.response.headers.get('cache-status')).toBe('gateway; fwd=bypass');

    const other = {
      model: MODEL,
      temperature: 0,
      messages: [{ role: 'user' as const, content: fresh('Never stored') }],
    };
    const skip = (await client.chat.completions.create({ ...other, cache: 'skip' } as never).withResponse())
      .response;
    expect(skip.headers.get('x-cache-status')).toBe('skip');
    const after = (await client.chat.completions.create(other).withResponse()).response;
    expect(after.headers.get('x-cache-status')).toBe('miss');
  });

  it('keeps the reasoning with the answer and replays it in the stream', async () => {
    // o3 takes no temperature: a seed asks for the repeatable answer.
    const body = {
      model: 'openai/o3',
      seed: 3,
      messages: [{ role: 'user' as const, content: fresh('Think first') }],
    };
    const plain = await client.chat.completions.create(body);
    const reasoning = (plain.choices[0]?.message as { reasoning_content?: string } | undefined)
      ?.reasoning_content;
    expect(reasoning).toBeTruthy();
    const { data: stream, response } = await client.chat.completions
      .create({ ...body, stream: true })
      .withResponse();
    expect(response.headers.get('x-cache-status')).toBe('hit; type=exact');
    let replayed = '';
    let text = '';
    for await (const chunk of stream) {
      replayed +=
        (chunk.choices[0]?.delta as { reasoning_content?: string } | undefined)?.reasoning_content ?? '';
      text += chunk.choices[0]?.delta.content ?? '';
    }
    expect(replayed).toBe(reasoning);
    expect(text).toBe(plain.choices[0]?.message.content);
  });

  it('answers semantic mode exactly, and says so, when no embedding model is configured', async () => {
    const body = {
      model: MODEL,
      cache: 'semantic',
      messages: [{ role: 'user' as const, content: fresh('No embedder here') }],
    } as OpenAI.ChatCompletionCreateParamsNonStreaming;
    const first = await client.chat.completions.create(body).withResponse();
    expect(first.response.headers.get('x-cache-status')).toBe('miss; semantic=unavailable');
    const again = await client.chat.completions.create(body).withResponse();
    expect(again.response.headers.get('x-cache-status')).toBe('hit; type=exact');
  });

  it('refuses an unknown mode with 400 naming the field', async () => {
    await expect(
      client.chat.completions.create({
        model: MODEL,
        messages: [{ role: 'user', content: 'x' }],
        cache: 'sometimes',
      } as never),
    ).rejects.toMatchObject({ status: 400 });
  });

  it('refuses an unknown x-routing strategy with 400 before the cache, as on a miss', async () => {
    const body = {
      model: MODEL,
      temperature: 0,
      messages: [{ role: 'user', content: fresh('Which strategy?') }],
    };
    const post = (routing?: string) =>
      fetch(`${gateway.url}/v1/chat/completions`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${key}`,
          'content-type': 'application/json',
          ...(routing !== undefined && { 'x-routing': routing }),
        },
        body: JSON.stringify(body),
      });
    expect((await post()).status).toBe(200);
    const hit = await post('cost');
    expect(hit.status).toBe(200);
    expect(hit.headers.get('x-cache-status')).toBe('hit; type=exact');
    const refused = await post('bogus');
    expect(refused.status).toBe(400);
    expect(refused.headers.get('x-cache-status')).toBeNull();
    expect((await json(refused)).error).toMatchObject({
      message: "'x-routing': one of cost, speed, quality, auto",
      type: 'invalid_request_error',
    });
  });
});

describe('what auto caches: only requests that ask for a repeatable answer', () => {
  const statusOf = (r: { response: Response }) => r.response.headers.get('x-cache-status');

  it('sends two requests without a temperature to the provider, plain or streamed; temperature 0 or a seed is a hit', async () => {
    // OpenAI's default temperature is 1: the same prompt sent twice is meant to get two answers.
    const sampled = { model: MODEL, messages: [{ role: 'user' as const, content: fresh('Name a colour') }] };
    const before = upstreamCalls();
    const one = await client.chat.completions.create(sampled).withResponse();
    const two = await client.chat.completions.create(sampled).withResponse();
    expect([statusOf(one), statusOf(two)]).toEqual(['skip', 'skip']);
    expect(two.data.choices[0]?.message.content).toBeTruthy();
    const { data: stream, response } = await client.chat.completions
      .create({ ...sampled, stream: true })
      .withResponse();
    for await (const _chunk of stream) {
      // drained
    }
    expect(response.headers.get('x-cache-status')).toBe('skip');
    expect(upstreamCalls()).toBe(before + 3);

    for (const repeatable of [{ temperature: 0 }, { seed: 42 }, { temperature: 0.9, seed: 42 }]) {
      const body = {
        ...sampled,
        ...repeatable,
        messages: [{ role: 'user' as const, content: fresh('Again') }],
      };
      const calls = upstreamCalls();
      expect(statusOf(await client.chat.completions.create(body).withResponse())).toBe('miss');
      expect(statusOf(await client.chat.completions.create(body).withResponse())).toBe('hit; type=exact');
      // A stream asking for the same repeatable answer is served the stored one.
      const replay = await client.chat.completions.create({ ...body, stream: true }).withResponse();
      for await (const _chunk of replay.data) {
        // drained
      }
      expect(replay.response.headers.get('x-cache-status')).toBe('hit; type=exact');
      expect(upstreamCalls()).toBe(calls + 1);
    }
  });

  it('caches an opted-in account’s requests whatever their temperature (cache_default), unless a request says otherwise', async () => {
    const opted = await json(await gateway.admin('/accounts', { name: 'opted in' }));
    await gateway.admin(`/accounts/${opted.account_id}/top-ups`, { cents: 100, reference: 'p' });
    const own = sdk(opted.key);
    const bad = await gateway.admin(`/accounts/${opted.account_id}/settings`, { cache_default: 'always' });
    expect(bad.status).toBe(400);
    expect((await json(bad)).error.message).toContain('cache_default');
    const set = await gateway.admin(`/accounts/${opted.account_id}/settings`, { cache_default: 'force' });
    expect(await json(set)).toEqual({ account_id: opted.account_id, cache_default: 'force' });

    const body = { model: MODEL, messages: [{ role: 'user' as const, content: fresh('Cache me anyway') }] };
    // The live state folds the setting from the log: once it has, the first request is stored.
    await eventually(
      async () => statusOf(await own.chat.completions.create(body).withResponse()),
      (status) => status === 'miss',
      3000,
    );
    const before = upstreamCalls();
    expect(statusOf(await own.chat.completions.create(body).withResponse())).toBe('hit; type=exact');
    const streamed = await own.chat.completions.create({ ...body, stream: true }).withResponse();
    for await (const _chunk of streamed.data) {
      // drained
    }
    expect(streamed.response.headers.get('x-cache-status')).toBe('hit; type=exact');
    expect(upstreamCalls()).toBe(before);
    const asked = await own.chat.completions.create({ ...body, cache: 'auto' } as never).withResponse();
    expect(statusOf(asked)).toBe('skip');
    // The account's key alone sets nothing: another account's identical request is still sampled.
    expect(statusOf(await client.chat.completions.create(body).withResponse())).toBe('skip');

    const cli = await runCli(
      ['accounts', 'update', '--account', opted.account_id, '--cache-default', 'auto'],
      gateway.env,
    );
    expect(cli.code, cli.stderr).toBe(0);
    await eventually(
      async () => statusOf(await own.chat.completions.create(body).withResponse()),
      (status) => status === 'skip',
      3000,
    );
    const events = await gateway.runtime.store.readStream(`account-${opted.account_id}`);
    expect(
      events
        .filter((e) => e.type === 'AccountSettingsChanged')
        .map((e) => (e.data as { cacheDefault?: string }).cacheDefault),
    ).toEqual(['force', 'auto']);
  });
});

describe('a request the cache takes no part in', () => {
  it('is neither looked up nor stored, plain or streamed, chat or messages, and still says skip', async () => {
    // Deciding that a request is not the cache's (`skip`, or a sampled one in `auto`) is all the work it gets: the
    // cache itself is not asked. Watched on the cache's own methods, since nothing of it shows in the answer.
    const lookup = vi.spyOn(ResponseCache.prototype, 'lookup');
    const save = vi.spyOn(ResponseCache.prototype, 'save');
    try {
      const messages = [{ role: 'user' as const, content: fresh('Not for the cache') }];
      const plain = await client.chat.completions
        .create({ model: MODEL, messages, cache: 'skip' } as OpenAI.ChatCompletionCreateParamsNonStreaming)
        .withResponse();
      const sampled = await client.chat.completions.create({ model: MODEL, messages }).withResponse();
      const streamed = await client.chat.completions
        .create({
          model: MODEL,
          messages,
          stream: true,
          cache: 'skip',
        } as OpenAI.ChatCompletionCreateParamsStreaming)
        .withResponse();
      for await (const _chunk of streamed.data) {
        // drained
      }
      const anthropic = await call('POST', '/messages', key, {
        model: MODEL,
        max_tokens: 16,
        messages,
        stream: true,
      });
      expect(anthropic.status).toBe(200);
      expect(await anthropic.text()).toContain('message_stop');
      for (const response of [plain.response, sampled.response, streamed.response, anthropic]) {
        expect(response.headers.get('x-cache-status')).toBe('skip');
        expect(response.headers.get('cache-status')).toBe('gateway; fwd=bypass');
      }
      expect(lookup).not.toHaveBeenCalled();
      expect(save).not.toHaveBeenCalled();
      for (const response of [plain.response, streamed.response]) {
        const id = response.headers.get('x-request-id') as string;
        const record = await eventually(
          async () => json(await call('GET', `/requests/${id}`, key)),
          (r) => r.id === id,
          3000,
        );
        expect(record).toMatchObject({ cache_status: 'skip', cache: null });
      }
      // The same request asking for the cache is looked up and stored.
      const forced = await client.chat.completions
        .create({ model: MODEL, messages, cache: 'force' } as OpenAI.ChatCompletionCreateParamsNonStreaming)
        .withResponse();
      expect(forced.response.headers.get('x-cache-status')).toBe('miss');
      expect(lookup).toHaveBeenCalledTimes(1);
      expect(save).toHaveBeenCalledTimes(1);
    } finally {
      lookup.mockRestore();
      save.mockRestore();
    }
  });
});

describe('tenancy of the cache', () => {
  it('never serves one account’s answer to another, nor a sub-account’s to its account or a sibling', async () => {
    const content = fresh('A private question');
    const body = { model: MODEL, temperature: 0, messages: [{ role: 'user' as const, content }] };
    await client.chat.completions.create(body);
    const status = async (apiKey: string) =>
      (await sdk(apiKey).chat.completions.create(body).withResponse()).response.headers.get('x-cache-status');
    expect(await status(key)).toBe('hit; type=exact');

    const other = await json(await gateway.admin('/accounts', { name: 'neighbour' }));
    await gateway.admin(`/accounts/${other.account_id}/top-ups`, { cents: 100, reference: 'p' });
    expect(await status(other.key)).toBe('miss');

    const one = await json(await call('POST', '/sub-accounts', key, { name: 'one', spend_cap_cents: 100 }));
    const two = await json(await call('POST', '/sub-accounts', key, { name: 'two', spend_cap_cents: 100 }));
    expect(await status(one.key)).toBe('miss');
    expect(await status(one.key)).toBe('hit; type=exact');
    expect(await status(two.key)).toBe('miss');
    const own = fresh('Only the customer asked this');
    const asked = { model: MODEL, temperature: 0, messages: [{ role: 'user' as const, content: own }] };
    await sdk(one.key).chat.completions.create(asked);
    const reseller = await client.chat.completions.create(asked).withResponse();
    expect(reseller.response.headers.get('x-cache-status')).toBe('miss');
  });

  it('refuses a hit with 402 when the sub-account is at its cap, rather than answering for free', async () => {
    const sub = await json(
      await call('POST', '/sub-accounts', key, { name: 'capped', spend_cap_cents: 100 }),
    );
    // A long system prompt on gpt-4o makes the answer cost over a cent, so a whole-cent cap can sit between
    // what was spent and what a hit would add.
    const system = 'context '.repeat(6000);
    const body = {
      model: 'openai/gpt-4o',
      temperature: 0,
      messages: [
        { role: 'system' as const, content: system },
        { role: 'user' as const, content: fresh('Capped') },
      ],
    };
    const first = await sdk(sub.key).chat.completions.create(body).withResponse();
    const spent = Number(first.response.headers.get('x-cost-cents'));
    const cap = Math.ceil(spent);
    expect(cap - spent).toBeLessThan(half(spent));
    const patched = await call('PATCH', `/sub-accounts/${sub.id}`, key, { spend_cap_cents: cap });
    expect(patched.status).toBe(200);
    const refused = await eventually(
      async () =>
        (
          await sdk(sub.key)
            .chat.completions.create(body)
            .withResponse()
            .catch((e) => e)
        ).status,
      (status) => status === 402,
      3000,
    );
    expect(refused).toBe(402);
    await expect(sdk(sub.key).chat.completions.create(body)).rejects.toMatchObject({
      status: 402,
      error: { type: 'budget_exceeded' },
    });
    // The account itself, without the cap, is served from its own scope (a miss, then a hit).
    await client.chat.completions.create(body);
    const own = await client.chat.completions.create(body).withResponse();
    expect(own.response.headers.get('x-cache-status')).toBe('hit; type=exact');
  });
});

describe('what is never stored', () => {
  it('does not store an error: the next identical request reaches the provider and is served', async () => {
    const body = {
      model: MODEL,
      temperature: 0,
      messages: [{ role: 'user' as const, content: fresh('Fails first') }],
    };
    openai.script({
      kind: 'error',
      status: 400,
      body: { error: { message: 'bad', type: 'invalid_request_error' } },
    });
    await expect(client.chat.completions.create(body)).rejects.toMatchObject({ status: 400 });
    const before = upstreamCalls();
    const served = await client.chat.completions.create(body).withResponse();
    expect(served.response.headers.get('x-cache-status')).toBe('miss');
    expect(upstreamCalls()).toBe(before + 1);
    expect(served.data.choices[0]?.message.content).toBeTruthy();
  });

  it('does not store an answer with tool calls, plain or streamed', async () => {
    const body = {
      model: MODEL,
      temperature: 0,
      messages: [{ role: 'user' as const, content: fresh('What is the weather in Paris?') }],
      tools: [
        {
          type: 'function' as const,
          function: { name: 'weather', parameters: { type: 'object', properties: {} } },
        },
      ],
    };
    const first = await client.chat.completions.create(body);
    expect(first.choices[0]?.message.tool_calls?.length).toBeGreaterThan(0);
    const again = await client.chat.completions.create(body).withResponse();
    expect(again.response.headers.get('x-cache-status')).toBe('miss');
    const streamed = await client.chat.completions.create({ ...body, stream: true });
    for await (const _chunk of streamed) {
      // drained
    }
    const after = await client.chat.completions.create(body).withResponse();
    expect(after.response.headers.get('x-cache-status')).toBe('miss');
  });

  it('does not store a cut answer (finish_reason length) nor a stream the client left', async () => {
    const cut = {
      model: MODEL,
      temperature: 0,
      max_tokens: 1,
      messages: [{ role: 'user' as const, content: fresh('Say a lot') }],
    };
    const first = await client.chat.completions.create(cut);
    expect(first.choices[0]?.finish_reason).toBe('length');
    expect(
      (await client.chat.completions.create(cut).withResponse()).response.headers.get('x-cache-status'),
    ).toBe('miss');

    const left = {
      model: MODEL,
      temperature: 0,
      messages: [{ role: 'user' as const, content: fresh('one two three four five six') }],
    };
    openai.script({ kind: 'ok', chunkDelayMs: 50 });
    const controller = new AbortController();
    const stream = await client.chat.completions.create(
      { ...left, stream: true },
      { signal: controller.signal },
    );
    await (async () => {
      for await (const _chunk of stream) controller.abort();
    })().catch(() => {});
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(
      (await client.chat.completions.create(left).withResponse()).response.headers.get('x-cache-status'),
    ).toBe('miss');
  });
});

describe('the books', () => {
  it('leave a log whose holds, caps, prices and balances the audit passes, hits included', async () => {
    const audit = await runCli(['audit'], gateway.env);
    for (const check of ['holds', 'caps', 'balances', 'pricing'])
      expect(audit.stdout, audit.stdout).toMatch(new RegExp(`PASS\\s+${check}\\s`));
  });
});
