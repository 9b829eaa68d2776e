import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, startTestGateway, type TestGateway } from '../support/gateway.ts';
import { type Json, json } from '../support/json.ts';
import { toneWav } from '../upstreams/audio-model.ts';
import type { BatchUpstream } from '../upstreams/batch-sim.ts';
import { type JobProviders, jobProviderEnv, startJobProviders } from '../upstreams/jobs.ts';
import { startOpenAiBatchUpstream } from '../upstreams/openai-batch.ts';

// A sub-account's `allowed_models` (issue 32, item 3): every endpoint that takes a model refuses any other with 403
// before anything is held, `auto` routes among the allowed ones, and the catalog shows only those.

let openai: BatchUpstream;
let jobs: JobProviders;
let gateway: TestGateway;
let mainKey: string;
/** Sub-accounts allowed `local/*`, `openai/gpt-4o-mini` and `local/echo`, by that name. */
type Sub = { id: string; key: string };
const subs = {} as Record<'local' | 'mini' | 'echo', Sub>;
const clients: Client[] = [];

const v1 = (key: string, method: string, path: string, body?: unknown) =>
  fetch(`${gateway.url}/v1${path}`, {
    method,
    headers: {
      authorization: `Bearer ${key}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });

const sdk = (key: string) => new OpenAI({ apiKey: key, baseURL: `${gateway.url}/v1`, maxRetries: 0 });
const say = (content: string) => [{ role: 'user' as const, content }];

/** The error an SDK call failed with (it must fail). */
async function refusal(call: Promise<unknown>): Promise<InstanceType<typeof OpenAI.APIError>> {
  const error = await call.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(OpenAI.APIError);
  return error as InstanceType<typeof OpenAI.APIError>;
}

/** The types of the budget events a request (by its gateway id) appended: none of them a hold, for a refusal. */
async function ledgerEventsOf(requestId: string | null): Promise<string[]> {
  const { rows } = await gateway.runtime.database.pool.query<{ type: string }>(
    `SELECT type FROM events WHERE data->>'requestId' = $1 AND type LIKE 'Spend%'`,
    [requestId],
  );
  return rows.map((row) => row.type);
}

/** A 403 permission_error naming the model and what the key may use, with nothing held for it. */
async function expectRefused(response: Response, model: string, allowed: string): Promise<void> {
  const body = await json(response);
  expect(response.status, JSON.stringify(body)).toBe(403);
  expect(body.error).toMatchObject({ type: 'permission_error', code: 403 });
  expect(body.error.message).toContain(model);
  expect(body.error.message).toContain(allowed);
  expect(await ledgerEventsOf(response.headers.get('x-gw-request-id'))).toEqual([]);
}

async function connect(key: string): Promise<Client> {
  const client = new Client({ name: 'e2e', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${gateway.url}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${key}` } },
    }),
  );
  clients.push(client);
  return client;
}

beforeAll(async () => {
  [openai, jobs] = await Promise.all([startOpenAiBatchUpstream(), startJobProviders()]);
  gateway = await startTestGateway(
    {
      OPENAI_API_KEY: 'sk-upstream',
      OPENAI_BASE_URL: `${openai.url}/v1`,
      ...jobProviderEnv(jobs.url),
      GATEWAY_ALLOW_PRIVATE_URLS: 'true',
      GATEWAY_UPSTREAM_TIMEOUT_MS: '5000',
      GATEWAY_BATCH_POLL_MS: '10',
    },
    { workerIntervalsMs: { batches: 50, evals: 50 } },
  );
  const account = await json(await gateway.admin('/accounts', { name: 'reseller' }));
  mainKey = account.key;
  await gateway.admin(`/accounts/${account.account_id}/top-ups`, { cents: 10_000, reference: 'funding' });
  for (const [name, allowed] of [
    ['local', ['local/*']],
    ['mini', ['openai/gpt-4o-mini']],
    ['echo', ['local/echo']],
  ] as const) {
    const created = await json(
      await v1(mainKey, 'POST', '/sub-accounts', {
        name,
        spend_cap_cents: 1000,
        allowed_models: allowed,
      }),
    );
    expect(created.allowed_models).toEqual(allowed);
    subs[name] = { id: created.id, key: created.key };
  }
});
afterAll(async () => {
  await Promise.all(clients.map((c) => c.close().catch(() => {})));
  await gateway?.close();
  await Promise.all([openai?.close(), jobs?.close()]);
});

describe('a sub-account’s allowed models', () => {
  it('refuses any other model with 403 before a hold, by its catalog id, and serves an allowed one', async () => {
    const client = sdk(subs.local.key);
    for (const model of ['openai/gpt-4o-mini', 'gpt-4o-mini']) {
      const error = await refusal(client.chat.completions.create({ model, messages: say('hi') }));
      expect(error.status).toBe(403);
      expect(error.type).toBe('permission_error');
      expect(error.param).toBe('model');
      // A bare id is matched as the catalog id it resolves to.
      expect(error.message).toContain(
        model === 'gpt-4o-mini' ? 'gpt-4o-mini (openai/gpt-4o-mini)' : 'openai/gpt-4o-mini',
      );
      expect(error.message).toContain('may use local/*');
      expect(await ledgerEventsOf(error.headers?.get('x-gw-request-id') ?? null)).toEqual([]);
    }
    expect(openai.requests).toEqual([]);

    const { data, response } = await client.chat.completions
      .create({ model: 'local/echo', messages: say('allowed') })
      .withResponse();
    expect(data.choices[0]?.message.content).toBe('allowed');
    expect(response.headers.get('x-model')).toBe('local/echo');
    // A main key is not restricted.
    const main = await sdk(mainKey).chat.completions.create({
      model: 'gpt-4o-mini',
      messages: say('main'),
    });
    expect(main.model).toBe('openai/gpt-4o-mini');
  });

  it('refuses a fallback list naming a model the key may not use, whatever comes first', async () => {
    const response = await v1(subs.local.key, 'POST', '/chat/completions', {
      model: 'local/echo',
      models: ['local/echo-pro', 'openai/gpt-4o-mini'],
      messages: say('fallbacks'),
    });
    await expectRefused(response, 'openai/gpt-4o-mini', 'local/*');
  });

  it('routes auto only among the allowed models, and refuses it when none can be routed to', async () => {
    const ask = { model: 'auto', messages: say('route me') };
    const preview = async (key: string) => {
      const response = await fetch(`${gateway.url}/v1/routing/preview`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${key}`,
          'content-type': 'application/json',
          'x-routing': 'quality',
        },
        body: JSON.stringify(ask),
      });
      return { status: response.status, body: await json(response) };
    };
    const main = await preview(mainKey);
    expect(main.body.chosen).not.toBe('openai/gpt-4o-mini');
    expect(main.body.candidates_count).toBeGreaterThan(1);
    const mini = await preview(subs.mini.key);
    expect(mini.status).toBe(200);
    expect(mini.body).toMatchObject({ chosen: 'openai/gpt-4o-mini', candidates_count: 1 });
    expect(mini.body.candidates.map((c: Json) => c.model)).toEqual(['openai/gpt-4o-mini']);

    const { data, response } = await sdk(subs.mini.key)
      .chat.completions.create(ask, { headers: { 'x-routing': 'quality' } })
      .withResponse();
    expect(data.model).toBe('openai/gpt-4o-mini');
    expect(response.headers.get('x-routing-model')).toBe('openai/gpt-4o-mini');

    // Beside a real provider the local models are never routed to: `local/*` leaves nothing.
    const none = await v1(subs.local.key, 'POST', '/chat/completions', ask);
    await expectRefused(none, 'auto', 'local/*');
  });

  it('lists only the allowed models, and a disallowed one is unknown to the key', async () => {
    const client = sdk(subs.local.key);
    const ids: string[] = [];
    for await (const model of client.models.list()) ids.push(model.id);
    expect(ids.length).toBeGreaterThan(1);
    expect(ids.every((id) => id.startsWith('local/'))).toBe(true);
    const whole = await json(await v1(subs.local.key, 'GET', '/models?all=true'));
    expect(whole.data.every((m: Json) => m.id.startsWith('local/'))).toBe(true);
    expect((await client.models.retrieve('local/echo')).id).toBe('local/echo');
    const hidden = await refusal(client.models.retrieve('openai/gpt-4o-mini'));
    expect(hidden.status).toBe(404);
    const bare = await v1(subs.local.key, 'GET', '/models/gpt-4o-mini');
    expect(bare.status).toBe(404);

    const mainIds: string[] = [];
    for await (const model of sdk(mainKey).models.list()) mainIds.push(model.id);
    expect(mainIds).toContain('openai/gpt-4o-mini');

    // A default the key may not use is none for it.
    const defaults = async (key: string) =>
      new Map(
        (await json(await v1(key, 'GET', '/capabilities'))).data.map((c: Json) => [c.id, c.default_model]),
      );
    const [mainDefaults, echoDefaults] = [await defaults(mainKey), await defaults(subs.echo.key)];
    const moderation = [...mainDefaults.keys()].find((id) => String(id).includes('moderation'));
    expect(mainDefaults.get(moderation)).not.toBeNull();
    expect(echoDefaults.get(moderation)).toBeNull();
  });

  it('refuses it on every endpoint that takes a model: the modalities, formats, audio and jobs', async () => {
    const key = subs.echo.key;
    const client = sdk(key);
    const allowed = 'may use local/echo';
    for (const [what, call, model] of [
      ['embeddings', () => client.embeddings.create({ model: 'local/embed', input: 'x' }), 'local/embed'],
      ['moderations', () => client.moderations.create({ input: 'x' }), 'moderation'],
      ['images', () => client.images.generate({ model: 'local/image', prompt: 'a cat' }), 'local/image'],
      [
        'speech',
        () => client.audio.speech.create({ model: 'local/speech', voice: 'alloy', input: 'hello' }),
        'local/speech',
      ],
      [
        'transcription',
        async () =>
          client.audio.transcriptions.create({
            model: 'local/transcribe',
            file: await toFile(toneWav(0.5), 'a.wav'),
          }),
        'local/transcribe',
      ],
      [
        'legacy completions',
        () => client.completions.create({ model: 'openai/gpt-3.5-turbo-instruct', prompt: 'x' }),
        'openai/gpt-3.5-turbo-instruct',
      ],
      [
        'responses',
        () => client.responses.create({ model: 'openai/gpt-4o-mini', input: 'x' }),
        'gpt-4o-mini',
      ],
    ] as const) {
      // One at a time, each refused before the next is sent.
      const error = await refusal(call());
      expect(error.status, what).toBe(403);
      expect(error.type, what).toBe('permission_error');
      expect(error.message, what).toContain(model);
      expect(error.message, what).toContain(allowed);
      expect(await ledgerEventsOf(error.headers?.get('x-gw-request-id') ?? null), what).toEqual([]);
    }

    const messages = await v1(key, 'POST', '/messages', {
      model: 'openai/gpt-4o-mini',
      max_tokens: 10,
      messages: say('x'),
    });
    expect(messages.status).toBe(403);
    expect((await json(messages)).error).toMatchObject({ type: 'permission_error' });
    const counted = await v1(key, 'POST', '/messages/count_tokens', {
      model: 'gpt-4o-mini',
      messages: say('x'),
    });
    expect(counted.status).toBe(403);

    // A job is refused before anything is queued or held: the kind's default model included.
    await expectRefused(
      await v1(key, 'POST', '/videos/generations', { prompt: 'a cat' }),
      'google/veo-3.0-fast-generate-001',
      allowed,
    );
    const form = new FormData();
    form.append('file', new Blob([toneWav(0.5)], { type: 'audio/wav' }), 'job.wav');
    form.append('model', 'local/transcribe');
    form.append('async', 'true');
    await expectRefused(
      await fetch(`${gateway.url}/v1/audio/transcriptions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}` },
        body: form,
      }),
      'local/transcribe',
      allowed,
    );
  });

  it('fails a batch line whose model is not allowed with the 403 in the error file, and serves the rest', async () => {
    const client = sdk(subs.local.key);
    const line = (id: string, body: Record<string, unknown>) =>
      JSON.stringify({
        custom_id: id,
        method: 'POST',
        url: '/v1/chat/completions',
        body: { messages: say(id), max_tokens: 20, ...body },
      });
    const input = [
      line('allowed', { model: 'local/echo' }),
      // Sent to OpenAI's batch API when allowed: refused at its hold.
      line('upstream', { model: 'openai/gpt-4o-mini' }),
      line('fallback', { model: 'local/echo', models: ['local/echo', 'openai/gpt-4o'] }),
    ].join('\n');
    const file = await client.files.create({
      file: await toFile(Buffer.from(input), 'in.jsonl'),
      purpose: 'batch',
    });
    const created = await client.batches.create({
      input_file_id: file.id,
      endpoint: '/v1/chat/completions',
      completion_window: '24h',
    });
    const done = await eventually(
      () => client.batches.retrieve(created.id),
      (b) => b.status === 'completed' || b.status === 'failed',
      20_000,
    );
    expect(done.request_counts).toEqual({ total: 3, completed: 1, failed: 2 });
    const lines = async (id: string | null | undefined) =>
      (await (await client.files.content(id as string)).text())
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l));
    expect((await lines(done.output_file_id)).map((l: Json) => l.custom_id)).toEqual(['allowed']);
    const errors = new Map((await lines(done.error_file_id)).map((l: Json) => [l.custom_id, l.response]));
    expect(errors.get('upstream')).toMatchObject({
      status_code: 403,
      body: { error: { type: 'permission_error', message: expect.stringContaining('openai/gpt-4o-mini') } },
    });
    expect(errors.get('fallback')).toMatchObject({
      status_code: 403,
      body: { error: { type: 'permission_error', message: expect.stringContaining('openai/gpt-4o') } },
    });
    // Nothing of it reached OpenAI's batch API: the refused line was its only one.
    expect(openai.requests.filter((r) => /files|batches/.test(r.path))).toEqual([]);
  });

  it('holds for the MCP tools, which call the API with the caller’s key', async () => {
    const mcp = await connect(subs.local.key);
    const refused = await mcp.callTool({
      name: 'chat',
      arguments: { model: 'openai/gpt-4o-mini', prompt: 'hi' },
    });
    expect(refused.isError).toBe(true);
    expect((refused.content as { text: string }[])[0]?.text).toMatch(
      /^HTTP 403 \(permission_error\): 'model': openai\/gpt-4o-mini is not allowed for this key/,
    );
    const served = await mcp.callTool({
      name: 'chat',
      arguments: { model: 'local/echo', prompt: 'via mcp' },
    });
    expect(served.isError).toBeFalsy();
    const listed = (await mcp.callTool({ name: 'list_models', arguments: { all: true } }))
      .structuredContent as Json;
    expect(listed.total).toBeGreaterThan(0);
    expect(listed.data.every((m: Json) => m.id.startsWith('local/'))).toBe(true);
  });

  it('refuses replays and evals of other models, and an eval alias whose winner is no longer allowed', async () => {
    const key = subs.local.key;
    const source = await v1(key, 'POST', '/chat/completions', {
      model: 'local/echo',
      messages: say('source'),
    });
    const sourceId = source.headers.get('x-gw-request-id');
    const replay = await eventually(
      () => v1(key, 'POST', '/replays', { source_request_id: sourceId, target_model: 'openai/gpt-4o-mini' }),
      (r) => r.status !== 404,
    );
    const replayed = await json(replay);
    expect(replay.status).toBe(403);
    expect(replayed.error.message).toMatch(/^'target_model': openai\/gpt-4o-mini is not allowed/);

    const dataset = [{ input: 'ping', expected: 'ping' }];
    const refused = await v1(key, 'POST', '/evals', {
      name: 'mixed',
      candidate_models: ['local/echo', 'openai/gpt-4o-mini'],
      dataset,
      metric: 'cost',
    });
    expect(refused.status).toBe(403);
    expect((await json(refused)).error.message).toMatch(
      /^'candidate_models': openai\/gpt-4o-mini is not allowed/,
    );

    const created = await json(
      await v1(key, 'POST', '/evals', {
        name: 'local',
        candidate_models: ['local/echo', 'local/echo-pro'],
        dataset,
        metric: 'cost',
      }),
    );
    // Its judge would be an OpenAI model, which this key may not use: none is taken.
    expect(created.judge_model).toBeNull();
    const done = await eventually(
      async () => json(await v1(key, 'GET', `/evals/${created.id}`)),
      (e) => e.status === 'completed' || e.status === 'failed',
      20_000,
    );
    expect(done.winner_model).toBe('local/echo');
    const alias = `eval:${created.id}`;
    expect((await v1(key, 'POST', '/chat/completions', { model: alias, messages: say('x') })).status).toBe(
      200,
    );

    await v1(mainKey, 'PATCH', `/sub-accounts/${subs.local.id}`, { allowed_models: ['local/echo-pro'] });
    const after = await v1(key, 'POST', '/chat/completions', { model: alias, messages: say('x') });
    await expectRefused(after, `${alias}'s winner (local/echo)`, 'local/echo-pro');
  });
});
