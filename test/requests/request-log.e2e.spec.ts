import { createHash } from 'node:crypto';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deleteExpiredBodies } from '../../src/requests/retention.ts';
import { runCli } from '../support/cli.ts';
import { eventually, startTestGateway, type TestGateway } from '../support/gateway.ts';
import { type Json, json } from '../support/json.ts';
import { startMistralUpstream } from '../upstreams/mistral.ts';
import { startOpenAiUpstream } from '../upstreams/openai.ts';
import type { Upstream } from '../upstreams/types.ts';

let openai: Upstream;
let mistral: Upstream;
let gateway: TestGateway;
let key: string;
let client: OpenAI;

const sha = (value: unknown) => createHash('sha256').update(JSON.stringify(value)).digest('hex');
const get = async (path: string, apiKey = key) =>
  fetch(`${gateway.url}/v1${path}`, { headers: { authorization: `Bearer ${apiKey}` } });
/** The request's record once the read model has it. */
const logged = (id: string, apiKey = key): Promise<Response> =>
  eventually(
    () => get(`/requests/${id}`, apiKey),
    (r) => r.status === 200,
    3000,
  );

/** The record with its bodies: they are written to the store in the background, after the answer. */
const withBodies = async (id: string): Promise<Json> =>
  eventually(
    async () => json(await logged(id)),
    (r) => r.request_body !== null && r.response_body !== null,
    3000,
  );

const inDays = (days: number) => new Date(Date.now() + days * 24 * 60 * 60 * 1000);

beforeAll(async () => {
  [openai, mistral] = await Promise.all([startOpenAiUpstream(), startMistralUpstream()]);
  gateway = await startTestGateway({
    OPENAI_API_KEY: 'sk-upstream',
    OPENAI_BASE_URL: `${openai.url}/v1`,
    MISTRAL_API_KEY: 'upstream-mistral',
    MISTRAL_BASE_URL: `${mistral.url}/v1`,
  });
  const account = await json(await gateway.admin('/accounts', { name: 'logged' }));
  key = account.key;
  await gateway.admin(`/accounts/${account.account_id}/top-ups`, { cents: 1000, reference: 'p' });
  client = new OpenAI({ apiKey: key, baseURL: `${gateway.url}/v1`, maxRetries: 0 });
});
afterAll(async () => {
  await gateway?.close();
  await Promise.all([openai?.close(), mistral?.close()]);
});

describe('the request log: every request an event, read back through /v1/requests', () => {
  it('logs a plain chat completion with its cost, timings, and bodies whose hashes match the event', async () => {
    const messages = [{ role: 'user' as const, content: 'Bonjour, journal' }];
    const { data, response } = await client.chat.completions
      .create({ model: 'openai/gpt-4o-mini', messages }, { headers: { 'x-gw-tag': 'log-test' } })
      .withResponse();
    const id = response.headers.get('x-request-id') as string;
    const record = await withBodies(id);
    expect(record).toMatchObject({
      id,
      endpoint: '/v1/chat/completions',
      requested_model: 'openai/gpt-4o-mini',
      model: 'openai/gpt-4o-mini',
      provider: 'openai',
      status: 200,
      stream: false,
      tag: 'log-test',
      attempts: 1,
      fallbacks: 0,
      // No temperature: the provider samples, so the cache neither looks it up nor stores it.
      cache_status: 'skip',
      routing: null,
      bodies_kept: true,
    });
    expect(record.cost_cents).toBeCloseTo(Number(response.headers.get('x-cost-cents')), 9);
    expect(record.hold_id).toMatch(/^hold_/);
    expect(record.latency_ms).toBeGreaterThanOrEqual(record.latency_first_byte_ms);
    expect(record.request_body).toMatchObject({ model: 'openai/gpt-4o-mini', messages });
    expect(sha(record.request_body)).toBe(record.request_sha256);
    expect(sha(record.response_body)).toBe(record.response_sha256);
    expect(JSON.stringify(record.response_body)).toContain(data.choices[0]?.message.content as string);
  });

  it('logs a streamed completion assembled, and tells the stream’s cost (which has no X-Cost-Cents)', async () => {
    const { data: stream, response } = await client.chat.completions
      .create({
        model: 'openai/gpt-4o-mini',
        messages: [{ role: 'user', content: 'one two three' }],
        stream: true,
        stream_options: { include_usage: true },
      })
      .withResponse();
    let text = '';
    let cost: number | undefined;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? '';
      if (chunk.usage) cost = (chunk.usage as { cost_cents?: number }).cost_cents;
    }
    const id = response.headers.get('x-request-id') as string;
    const record = await withBodies(id);
    expect(record).toMatchObject({ status: 200, stream: true, model: 'openai/gpt-4o-mini' });
    expect(record.cost_cents).toBeGreaterThan(0);
    expect(record.cost_cents).toBeCloseTo(cost as number, 9);
    expect(record.response_body.choices[0]).toMatchObject({ index: 0, text, finish_reason: 'stop' });
    expect(sha(record.response_body)).toBe(record.response_sha256);
  });

  it('logs embeddings, a 404 unknown model and a 402 refusal, and lists them newest first with cursor paging', async () => {
    const { response } = await client.embeddings
      .create({ model: 'mistral/mistral-embed', input: 'the quick brown fox' })
      .withResponse();
    const embedId = response.headers.get('x-request-id') as string;
    const missing = await fetch(`${gateway.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'openai/no-such-model', messages: [{ role: 'user', content: 'x' }] }),
    });
    expect(missing.status).toBe(404);
    const missingError = (await json(missing)).error;
    const poor = await json(await gateway.admin('/accounts', { name: 'poor' }));
    await gateway.admin(`/accounts/${poor.account_id}/top-ups`, { cents: 1, reference: 'p' });
    const refused = await fetch(`${gateway.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${poor.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'openai/gpt-4o',
        max_tokens: 100_000,
        messages: [{ role: 'user', content: 'x' }],
      }),
    });
    expect(refused.status).toBe(402);
    const refusedError = (await json(refused)).error;

    const embed = await json(await logged(embedId));
    expect(embed).toMatchObject({ endpoint: '/v1/embeddings', status: 200, provider: 'mistral' });
    expect(embed.cost_cents).toBeGreaterThan(0);
    const notFound = await json(await logged(missing.headers.get('x-request-id') as string));
    // Why it was refused, as the client was told, and which key asked (a key issued unnamed reads as `default`).
    expect(notFound).toMatchObject({
      status: 404,
      error_type: 'model_not_found',
      error_message: "The model 'openai/no-such-model' does not exist",
      key_id: expect.stringMatching(/^key_/),
      key_name: 'default',
      cost_cents: 0,
      model: null,
    });
    expect(missingError.message).toBe(notFound.error_message);
    expect(embed).toMatchObject({ error_type: null, error_message: null, key_name: 'default' });
    const poorRecord = await json(await logged(refused.headers.get('x-request-id') as string, poor.key));
    expect(poorRecord).toMatchObject({
      status: 402,
      error_type: 'insufficient_balance',
      error_message: refusedError.message,
      cost_cents: 0,
    });

    const all: Json[] = [];
    let after: string | undefined;
    for (;;) {
      const page = await json(await get(`/requests?limit=2${after ? `&after=${after}` : ''}`));
      all.push(...page.data);
      if (!page.has_more) break;
      after = page.last_id;
    }
    expect(all.map((r) => r.id)[0]).toBe(missing.headers.get('x-request-id'));
    expect(all).toHaveLength(4);
    const times = all.map((r) => Date.parse(r.created_at));
    expect([...times].sort((a, b) => b - a)).toEqual(times);
    const failures = await json(await get('/requests?status=404'));
    expect(failures.data.map((r: Json) => r.id)).toEqual([missing.headers.get('x-request-id')]);
    const embeddings = await json(await get('/requests?model=mistral/mistral-embed'));
    expect(embeddings.data.map((r: Json) => r.id)).toEqual([embedId]);

    // Time bounds as an ISO 8601 date-time or Unix seconds; anything else is a 400 saying which.
    const newest = Date.parse(all[0]?.created_at);
    const since = Math.floor(newest / 1000);
    const seconds = await json(await get(`/requests?from=${since}`));
    const iso = await json(await get(`/requests?from=${new Date(since * 1000).toISOString()}`));
    expect(seconds.data.map((r: Json) => r.id)).toEqual(iso.data.map((r: Json) => r.id));
    expect(seconds.data.map((r: Json) => r.id)).toContain(all[0]?.id);
    expect(await json(await get(`/requests?to=${since - 3600}`))).toMatchObject({ data: [] });
    const bad = await get('/requests?from=abc');
    expect(bad.status).toBe(400);
    expect((await json(bad)).error.message).toContain('an ISO 8601 date-time or a Unix timestamp in seconds');

    // A count is decimal digits, given once: no exponent, no hex, no empty value read as 0.
    expect((await json(await get('/requests?limit=2'))).data).toHaveLength(2);
    for (const [query, says] of [
      ['limit=1e2', 'decimal digits'],
      ['limit=0x10', 'decimal digits'],
      ['limit=', 'decimal digits'],
      ['limit=1&limit=2', 'given once'],
      ['limit=0', '>=1'],
      ['limit=101', '<=100'],
      ['status=4O4', 'decimal digits'],
    ] as const) {
      const refused = await get(`/requests?${query}`);
      expect(refused.status, query).toBe(400);
      expect((await json(refused)).error, query).toMatchObject({
        type: 'invalid_request_error',
        param: query.split('=')[0],
        message: expect.stringContaining(says),
      });
    }
  });

  it('logs a provider failure (502) and a rate-limited request (429) with no cost', async () => {
    openai.script({ kind: 'error', status: 500 });
    const failed = await fetch(`${gateway.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'fail' }] }),
    });
    expect(failed.status).toBe(502);
    const failure = await json(await logged(failed.headers.get('x-request-id') as string));
    expect(failure).toMatchObject({
      status: 502,
      error_type: 'provider_error',
      error_message: (await json(failed)).error.message,
      model: 'openai/gpt-4o-mini',
      provider: 'openai',
      cost_cents: 0,
    });

    const limited = await json(await gateway.admin('/accounts', { name: 'limited log' }));
    await gateway.admin(`/accounts/${limited.account_id}/top-ups`, { cents: 100, reference: 'l' });
    await gateway.admin(`/accounts/${limited.account_id}/settings`, { rate_limit_rpm: 1 });
    const ask = () =>
      fetch(`${gateway.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${limited.key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'local/echo', messages: [{ role: 'user', content: 'hi' }] }),
      });
    let refused: Response | undefined;
    for (let i = 0; i < 5 && !refused; i++) {
      const response = await ask();
      if (response.status === 429) refused = response;
    }
    expect(refused?.status).toBe(429);
    // Reading the log is a request too: lift the limit first.
    await gateway.admin(`/accounts/${limited.account_id}/settings`, { rate_limit_rpm: 100_000 });
    const record = await json(await logged(refused?.headers.get('x-request-id') as string, limited.key));
    expect(record).toMatchObject({
      status: 429,
      error_type: 'rate_limit_error',
      error_message: expect.stringContaining('Rate limit of 1 requests per minute reached for this account'),
      cost_cents: 0,
    });
  });

  it('keeps a refusal message of any length, cut to 1,000 characters', async () => {
    const model = `openai/${'x'.repeat(3000)}`;
    const refused = await fetch(`${gateway.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model, messages: [{ role: 'user', content: 'x' }] }),
    });
    expect(refused.status).toBe(404);
    const told = (await json(refused)).error.message as string;
    expect(told.length).toBeGreaterThan(3000);
    const record = await json(await logged(refused.headers.get('x-request-id') as string));
    expect(record.error_message).toHaveLength(1000);
    expect(record.error_message).toBe(`${told.slice(0, 999)}…`);
  });

  it('marks the answers the response cache gave', async () => {
    const ask = () =>
      client.chat.completions
        .create({ model: 'local/echo', temperature: 0, messages: [{ role: 'user', content: 'cache me' }] })
        .withResponse();
    const first = (await ask()).response;
    const second = (await ask()).response;
    expect(second.headers.get('x-cache-status')).toMatch(/^hit/);
    const stored = await json(await logged(first.headers.get('x-request-id') as string));
    const hit = await json(await logged(second.headers.get('x-request-id') as string));
    expect(stored).toMatchObject({ cache_hit: false, cache_status: 'miss' });
    expect(hit).toMatchObject({ cache_hit: true, cache_status: expect.stringMatching(/^hit/) });
    const listed = await json(await get('/requests?limit=2'));
    expect(listed.data.map((r: Json) => [r.id, r.cache_hit])).toEqual([
      [hit.id, true],
      [stored.id, false],
    ]);
  });

  it('keeps another account’s and another sub-account’s requests out of sight (404)', async () => {
    const { response } = await client.chat.completions
      .create({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'mine' }] })
      .withResponse();
    const id = response.headers.get('x-request-id') as string;
    await logged(id);
    const other = await json(await gateway.admin('/accounts', { name: 'other' }));
    expect((await get(`/requests/${id}`, other.key)).status).toBe(404);
    expect((await json(await get('/requests', other.key))).data).toEqual([]);
    const sub = await json(
      await fetch(`${gateway.url}/v1/sub-accounts`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'customer', spend_cap_cents: 100 }),
      }),
    );
    expect((await get(`/requests/${id}`, sub.key)).status).toBe(404);
    const subClient = new OpenAI({ apiKey: sub.key, baseURL: `${gateway.url}/v1`, maxRetries: 0 });
    const own = await subClient.chat.completions
      .create({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'sub' }] })
      .withResponse();
    const subId = own.response.headers.get('x-request-id') as string;
    expect(await json(await logged(subId, sub.key))).toMatchObject({ sub_account_id: sub.id });
    const listed = await json(await get('/requests', sub.key));
    expect(listed.data.map((r: Json) => r.id)).toEqual([subId]);
  });

  it('deletes bodies past the retention, leaving the metadata readable and the audit passing', async () => {
    const { response } = await client.chat.completions
      .create({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'forget me' }] })
      .withResponse();
    const id = response.headers.get('x-request-id') as string;
    const before = await withBodies(id);
    expect(before.response_body).not.toBeNull();
    // Two days on, with a retention of one day.
    const deleted = await deleteExpiredBodies(gateway.runtime.database.pool, inDays(2), {
      days: 1,
      overrides: {},
    });
    expect(deleted).toBeGreaterThan(0);
    const after = await json(await get(`/requests/${id}`));
    expect(after).toMatchObject({
      id,
      status: 200,
      cost_cents: before.cost_cents,
      response_sha256: before.response_sha256,
      request_body: null,
      response_body: null,
    });
    const audit = await runCli(['audit'], gateway.env);
    expect(audit.code, audit.stderr + audit.stdout).toBe(0);
  });
});

describe('the request log, per account', () => {
  it('drops an account’s bodies, or keeps them for its own days, as the operator set', async () => {
    const open = async (name: string, settings: Json) => {
      const account = await json(await gateway.admin('/accounts', { name }));
      await gateway.admin(`/accounts/${account.account_id}/top-ups`, { cents: 100, reference: 'p' });
      const set = await gateway.admin(`/accounts/${account.account_id}/settings`, settings);
      expect(set.status).toBe(200);
      const c = new OpenAI({ apiKey: account.key, baseURL: `${gateway.url}/v1`, maxRetries: 0 });
      return { account, client: c };
    };
    const dropping = await open('dropping', { request_bodies: 'drop' });
    const brief = await open('brief', { request_retention_days: 1 });
    const ask = async (c: OpenAI, content: string) =>
      (
        await c.chat.completions
          .create({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content }] })
          .withResponse()
      ).response.headers.get('x-request-id') as string;
    // Live state must have the settings before the requests.
    await eventually(
      async () => gateway.runtime.live.account(brief.account.account_id)?.requestRetentionDays,
      (days) => days === 1,
      3000,
    );
    const dropped = await json(await logged(await ask(dropping.client, 'not kept'), dropping.account.key));
    expect(dropped).toMatchObject({ bodies_kept: false, request_body: null, response_body: null });
    expect(dropped.request_sha256).toMatch(/^[0-9a-f]{64}$/);

    const briefId = await ask(brief.client, 'kept one day');
    const keptId = await ask(client, 'kept thirty days');
    await logged(briefId, brief.account.key);
    await withBodies(keptId);
    await deleteExpiredBodies(gateway.runtime.database.pool, inDays(2), {
      days: 30,
      overrides: gateway.runtime.live.retentionOverrides(),
    });
    const briefAfter = await json(await get(`/requests/${briefId}`, brief.account.key));
    expect(briefAfter).toMatchObject({ status: 200, request_body: null, response_body: null });
    expect((await json(await get(`/requests/${keptId}`))).response_body).not.toBeNull();
  });
});

describe('the request log from the CLI', () => {
  it('shows one request with its bodies, and exports the month as JSON lines', async () => {
    const { response } = await client.chat.completions
      .create({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'for the auditors' }] })
      .withResponse();
    const id = response.headers.get('x-request-id') as string;
    const record = await withBodies(id);
    const shown = await runCli(['requests', 'show', id], gateway.env);
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.json).toMatchObject({
      id,
      cost_cents: record.cost_cents,
      request_body: record.request_body,
    });
    const month = new Date().toISOString().slice(0, 7);
    const exported = await runCli(['requests', 'export', '--month', month], gateway.env);
    expect(exported.code, exported.stderr).toBe(0);
    const lines = exported.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(lines.map((l) => l.id)).toContain(id);
    expect(lines.at(-1)).toMatchObject({ id, cost_nanos: record.cost_nanos });
    const unknown = await runCli(['requests', 'show', 'no-such-request'], gateway.env);
    expect(unknown.code).toBe(1);
    const other = await json(await gateway.admin('/accounts', { name: 'cli-set' }));
    const set = await runCli(
      [
        'accounts',
        'update',
        '--account',
        other.account_id,
        '--request-bodies',
        'drop',
        '--request-retention-days',
        '7',
      ],
      gateway.env,
    );
    expect(set.code, set.stderr).toBe(0);
    const live = await eventually(
      async () => gateway.runtime.live.account(other.account_id),
      (a) => a?.requestBodies === 'drop',
      3000,
    );
    expect(live).toMatchObject({ requestBodies: 'drop', requestRetentionDays: 7 });
  });
});
