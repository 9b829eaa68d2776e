import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { removeBodies } from '../../src/billing/request-bodies.ts';
import { FsBlobStore } from '../../src/files/blob-store.ts';
import { runCli } from '../support/cli.ts';
import { dropSchema } from '../support/database.ts';
import { eventually, startTestGateway, type TestGateway } from '../support/gateway.ts';
import { type Json, json } from '../support/json.ts';
import { startAnthropicUpstream } from '../upstreams/anthropic.ts';
import { startOpenAiUpstream } from '../upstreams/openai.ts';
import type { Upstream } from '../upstreams/types.ts';

let openai: Upstream;
let anthropic: Upstream;
let gateway: TestGateway;
let key: string;
let otherKey: string;
let client: OpenAI;

const SOURCE = 'openai/gpt-4o-mini';
const TARGET = 'anthropic/claude-sonnet-4-5';

const call = async (method: string, path: string, body?: unknown, apiKey = key) => {
  const response = await fetch(`${gateway.url}/v1${path}`, {
    method,
    headers: {
      authorization: `Bearer ${apiKey}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: response.status, headers: response.headers, body: await json(response) };
};

/** A chat completion through the SDK; its request id once the request log has its row and bodies. */
async function served(content: string, tag?: string): Promise<{ id: string; text: string }> {
  const { data, response } = await client.chat.completions
    .create(
      { model: SOURCE, messages: [{ role: 'user', content }] },
      { headers: tag ? { 'x-gw-tag': tag } : {} },
    )
    .withResponse();
  const id = response.headers.get('x-request-id') as string;
  await untilLogged(id, key);
  return { id, text: data.choices[0]?.message.content as string };
}

/** Waits until the request log has the request's row and both its bodies (written in the background). */
async function untilLogged(id: string, apiKey: string): Promise<void> {
  await eventually(
    async () =>
      json(
        await fetch(`${gateway.url}/v1/requests/${id}`, { headers: { authorization: `Bearer ${apiKey}` } }),
      ),
    (r) => r.request_body != null && r.response_body != null,
    5000,
  );
}

/** A chat completion made with another key; its request id once the request log has its bodies. */
async function servedBy(apiKey: string, content: string): Promise<string> {
  const response = await fetch(`${gateway.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: SOURCE, max_tokens: 20, messages: [{ role: 'user', content }] }),
  });
  expect(response.status).toBe(200);
  const id = response.headers.get('x-request-id') as string;
  await untilLogged(id, apiKey);
  return id;
}

async function charged(requestId: string): Promise<bigint> {
  const { rows } = await gateway.runtime.database.pool.query<{ total: string | null }>(
    `SELECT sum(charged_nanos)::text AS total FROM charges WHERE request_id = $1`,
    [requestId],
  );
  return BigInt(rows[0]?.total ?? '0');
}

beforeAll(async () => {
  [openai, anthropic] = await Promise.all([startOpenAiUpstream(), startAnthropicUpstream()]);
  gateway = await startTestGateway({
    OPENAI_API_KEY: 'sk-upstream',
    OPENAI_BASE_URL: `${openai.url}/v1`,
    ANTHROPIC_API_KEY: 'sk-sim-anthropic',
    ANTHROPIC_BASE_URL: anthropic.url,
    GATEWAY_JUDGE_MODEL: 'openai/gpt-4o',
  });
  for (const name of ['replayer', 'other']) {
    const account = await json(await gateway.admin('/accounts', { name }));
    await gateway.admin(`/accounts/${account.account_id}/top-ups`, { cents: 5000, reference: 'p' });
    if (name === 'replayer') key = account.key;
    else otherKey = account.key;
  }
  client = new OpenAI({ apiKey: key, baseURL: `${gateway.url}/v1`, maxRetries: 0 });
});
afterAll(async () => {
  await gateway?.close();
  await Promise.all([openai?.close(), anthropic?.close()]);
});

describe('replays: a logged request re-run against another model', () => {
  it('replays an openai request on an anthropic model, translated, with the seven fields and the target’s charge', async () => {
    const source = await served('Bonjour, replay');
    const replay = await call('POST', '/replays', { source_request_id: source.id, target_model: TARGET });
    expect(replay.status, JSON.stringify(replay.body)).toBe(200);
    const r = replay.body;
    expect(r).toMatchObject({
      status: 'completed',
      source_request_id: source.id,
      target_model: TARGET,
      source_output: source.text,
      target_output: 'echo: Bonjour, replay',
      scoring: 'judge',
    });
    expect(r.id).toMatch(/^rpl_/);
    expect(typeof r.created_at).toBe('number');
    for (const field of [
      'cost_source_cents',
      'cost_target_cents',
      'latency_source_ms',
      'latency_target_ms',
    ]) {
      expect(typeof r[field], field).toBe('number');
    }
    expect(r.score_delta).toBeGreaterThanOrEqual(-1);
    expect(r.score_delta).toBeLessThanOrEqual(1);
    expect(r.cost_target_cents).toBeGreaterThan(0);
    // The target's cost is what its request was charged; the judge's charges are recorded apart.
    const targetCharge = await charged(r.target_request_id);
    expect(r.cost_target_cents).toBeCloseTo(Number(targetCharge) / 1e7, 9);
    expect(r.judge.model).toBe('openai/gpt-4o');
    expect(r.judge.prompt).toContain('Bonjour, replay');
    const judged =
      (await charged(`${r.target_request_id}-judge1`)) + (await charged(`${r.target_request_id}-judge2`));
    expect(r.judge.cost_cents).toBeCloseTo(Number(judged) / 1e7, 9);
    expect(judged).toBeGreaterThan(0n);

    expect((await call('GET', `/replays/${r.id}`)).body).toEqual(r);
    const list = await call('GET', '/replays');
    expect(list.body.data.map((x: Json) => x.id)).toContain(r.id);
  });

  it('answers 404 for another account’s source or replay, 400 for a target of another modality or without a key', async () => {
    const source = await served('mine alone');
    const foreign = await call(
      'POST',
      '/replays',
      { source_request_id: source.id, target_model: TARGET },
      otherKey,
    );
    expect(foreign.status).toBe(404);
    const unknown = await call('POST', '/replays', { source_request_id: 'nope', target_model: TARGET });
    expect(unknown.status).toBe(404);
    const mine = await call('POST', '/replays', { source_request_id: source.id, target_model: TARGET });
    expect((await call('GET', `/replays/${mine.body.id}`, undefined, otherKey)).status).toBe(404);
    expect((await call('DELETE', `/replays/${mine.body.id}`, undefined, otherKey)).status).toBe(404);
    expect((await call('GET', '/replays', undefined, otherKey)).body.data).toEqual([]);

    const image = await call('POST', '/replays', {
      source_request_id: source.id,
      target_model: 'openai/dall-e-3',
    });
    expect(image.status).toBe(400);
    expect(image.body.error.message).toMatch(/target_model.*\/v1\/images/);
    const keyless = await call('POST', '/replays', {
      source_request_id: source.id,
      target_model: 'mistral/codestral-2508',
    });
    expect(keyless.status).toBe(400);
    expect(keyless.body.error.message).toContain('MISTRAL_API_KEY');
  });

  it('mirrors the sampled share of later requests without changing their answers, and stops when deleted', async () => {
    const source = await served('shadow seed', 'shadowed');
    const created = await call('POST', '/replays', {
      source_request_id: source.id,
      target_model: TARGET,
      shadow: true,
      sample_rate: 0.2,
      max_requests: 1000,
    });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    expect(created.body.status).toBe('shadowing');
    const id = created.body.id;

    const answers = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        client.chat.completions.create(
          { model: SOURCE, messages: [{ role: 'user', content: `later ${i}` }] },
          { headers: { 'x-gw-tag': 'shadowed' } },
        ),
      ),
    );
    answers.forEach((answer, i) => {
      expect(answer.choices[0]?.message.content).toBe(`echo: later ${i}`);
    });
    // Another tag, and another account, are not mirrored.
    await client.chat.completions.create({
      model: SOURCE,
      messages: [{ role: 'user', content: 'untagged' }],
    });

    const record = await eventually(
      async () => (await call('GET', `/replays/${id}`)).body,
      (r) => r.shadow.count >= 10,
      30_000,
    );
    await new Promise((resolve) => setTimeout(resolve, 500));
    const settled = (await call('GET', `/replays/${id}`)).body;
    expect(settled.shadow.count).toBe(10);
    expect(record.shadow.wins + record.shadow.ties + record.shadow.losses).toBe(record.shadow.count);
    expect(settled.shadow.cost_target_cents).toBeGreaterThan(0);
    const { rows } = await gateway.runtime.database.pool.query<{
      n: number;
      discounts: string[];
      tags: string[];
    }>(
      `SELECT count(*)::int AS n, array_agg(DISTINCT discount) AS discounts, array_agg(DISTINCT tag) AS tags
         FROM charges WHERE kind = 'settled' AND request_id LIKE $1 AND request_id NOT LIKE '%judge%'`,
      [`${id}-shadow-%`],
    );
    expect(rows[0]).toMatchObject({ n: 10, discounts: ['batch'], tags: ['shadow'] });

    const stopped = await call('DELETE', `/replays/${id}`);
    expect(stopped.status).toBe(200);
    expect(stopped.body.status).toBe('stopped');
    for (let i = 0; i < 10; i++) {
      await client.chat.completions.create(
        { model: SOURCE, messages: [{ role: 'user', content: `after ${i}` }] },
        { headers: { 'x-gw-tag': 'shadowed' } },
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect((await call('GET', `/replays/${id}`)).body.shadow.count).toBe(10);
  });

  it('replays a /v1/messages request (Anthropic’s format, served natively) on an openai model', async () => {
    const anthropicClient = new Anthropic({ apiKey: key, baseURL: gateway.url, maxRetries: 0 });
    const { data, response } = await anthropicClient.messages
      .create({ model: TARGET, max_tokens: 64, messages: [{ role: 'user', content: 'Hallo, messages' }] })
      .withResponse();
    const id = response.headers.get('x-request-id') as string;
    await eventually(
      async () =>
        json(
          await fetch(`${gateway.url}/v1/requests/${id}`, { headers: { authorization: `Bearer ${key}` } }),
        ),
      (r) => r.request_body != null && r.response_body != null,
      5000,
    );
    const replay = await call('POST', '/replays', { source_request_id: id, target_model: SOURCE });
    expect(replay.status, JSON.stringify(replay.body)).toBe(200);
    expect(replay.body).toMatchObject({
      endpoint: '/v1/messages',
      source_output: (data.content[0] as { text: string }).text,
      target_output: 'echo: Hallo, messages',
    });
  });

  it('replays a streamed source from its assembled answer, for chat and for a native Anthropic stream', async () => {
    const stream = await client.chat.completions
      .create({ model: SOURCE, stream: true, messages: [{ role: 'user', content: 'streamed source' }] })
      .withResponse();
    for await (const _chunk of stream.data) {
      // drained
    }
    const chatId = stream.response.headers.get('x-request-id') as string;
    const anthropicClient = new Anthropic({ apiKey: key, baseURL: gateway.url, maxRetries: 0 });
    const native = await anthropicClient.messages
      .create({
        model: TARGET,
        max_tokens: 64,
        stream: true,
        messages: [{ role: 'user', content: 'native stream' }],
      })
      .withResponse();
    for await (const _event of native.data) {
      // drained
    }
    const nativeId = native.response.headers.get('x-request-id') as string;
    for (const [id, text, target] of [
      [chatId, 'echo: streamed source', TARGET],
      [nativeId, 'echo: native stream', SOURCE],
    ] as const) {
      await eventually(
        async () =>
          json(
            await fetch(`${gateway.url}/v1/requests/${id}`, { headers: { authorization: `Bearer ${key}` } }),
          ),
        (r) => r.request_body != null && r.response_body != null,
        5000,
      );
      const replay = await call('POST', '/replays', { source_request_id: id, target_model: target });
      expect(replay.status, JSON.stringify(replay.body)).toBe(200);
      expect(replay.body).toMatchObject({ source_output: text, target_output: text });
    }
  });

  it('answers 409 naming the cause when the source’s bodies are gone', async () => {
    const source = await served('soon forgotten');
    const record = await json(
      await fetch(`${gateway.url}/v1/requests/${source.id}`, { headers: { authorization: `Bearer ${key}` } }),
    );
    const blobs = new FsBlobStore(join(gateway.env.GATEWAY_DATA_DIR as string, 'blobs'));
    await removeBodies({ sql: gateway.runtime.database.pool, blobs }, [
      record.request_sha256,
      record.response_sha256,
    ]);
    const replay = await call('POST', '/replays', { source_request_id: source.id, target_model: TARGET });
    expect(replay.status).toBe(409);
    expect(replay.body.error.message).toMatch(/bodies .* not kept/);
  });

  it('refuses a target over the tag budget with 402, as any request, and records the replay failed', async () => {
    const source = await served('within budget', 'capped');
    const budget = await call('POST', '/budgets', { tag: 'capped', cap_cents: 0 });
    expect(budget.status).toBe(200);
    const replay = await call('POST', '/replays', { source_request_id: source.id, target_model: TARGET });
    expect(replay.status, JSON.stringify(replay.body)).toBe(402);
    const failed = (await call('GET', '/replays?limit=1')).body.data[0];
    expect(failed).toMatchObject({ status: 'failed', source_request_id: source.id, error: { code: 402 } });
  });

  it('bills a sub-account’s replay to the sub-account, within its spend cap', async () => {
    const sub = await call('POST', '/sub-accounts', { name: 'customer', spend_cap_cents: 5 });
    expect(sub.status, JSON.stringify(sub.body)).toBe(200);
    const id = await servedBy(sub.body.key, 'from a customer');
    const replayAs = () =>
      call('POST', '/replays', { source_request_id: id, target_model: TARGET }, sub.body.key);

    // At its cap, the sub-account's replay is refused before the target is called, as any request of its key.
    expect((await call('PATCH', `/sub-accounts/${sub.body.id}`, { spend_cap_cents: 0 })).status).toBe(200);
    const calls = anthropic.requests.length;
    const refused = await replayAs();
    expect(refused.status, JSON.stringify(refused.body)).toBe(402);
    expect(refused.body.error.message).toContain('Spend cap of sub-account');
    expect(anthropic.requests.length).toBe(calls);

    expect((await call('PATCH', `/sub-accounts/${sub.body.id}`, { spend_cap_cents: 5 })).status).toBe(200);
    const replay = await replayAs();
    expect(replay.status, JSON.stringify(replay.body)).toBe(200);
    const { rows } = await gateway.runtime.database.pool.query<{
      sub_account_id: string | null;
      tag: string;
    }>(`SELECT sub_account_id, tag FROM charges WHERE kind = 'settled' AND request_id = $1`, [
      replay.body.target_request_id,
    ]);
    // A sub-account spends under its own default tag (it has none); `replay` is only its label.
    expect(rows).toEqual([{ sub_account_id: sub.body.id, tag: null }]);
  });

  it('mirrors in a sub-account’s shadow only that sub-account’s requests, charged to it', async () => {
    const [mine, sibling] = (await Promise.all(
      ['shadowing customer', 'sibling'].map(async (name) => {
        const sub = await call('POST', '/sub-accounts', { name, spend_cap_cents: 500 });
        expect(sub.status, JSON.stringify(sub.body)).toBe(200);
        return sub.body as { id: string; key: string };
      }),
    )) as [{ id: string; key: string }, { id: string; key: string }];
    const seed = await servedBy(mine.key, 'scoped shadow seed');
    const created = await call(
      'POST',
      '/replays',
      { source_request_id: seed, target_model: TARGET, shadow: true, sample_rate: 1, max_requests: 10 },
      mine.key,
    );
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    // The sibling's and the main key's requests come first in the log: a shadow that took them would count them first.
    await servedBy(sibling.key, 'a sibling asks');
    await servedBy(key, 'the account asks');
    const own = [await servedBy(mine.key, 'mine, once'), await servedBy(mine.key, 'mine, twice')];
    await eventually(
      async () => (await call('GET', `/replays/${created.body.id}`, undefined, mine.key)).body,
      (r) => r.shadow.count >= 2,
      10_000,
    );
    const { rows } = await gateway.runtime.database.pool.query<{ sub_account_id: string | null }>(
      `SELECT sub_account_id FROM charges WHERE kind = 'settled' AND request_id LIKE $1 AND request_id NOT LIKE '%judge%'`,
      [`${created.body.id}-shadow-%`],
    );
    expect(rows).toEqual([{ sub_account_id: mine.id }, { sub_account_id: mine.id }]);
    const record = (await call('GET', `/replays/${created.body.id}`, undefined, mine.key)).body;
    expect(record.shadow.count).toBe(own.length);
    await call('DELETE', `/replays/${created.body.id}`, undefined, mine.key);
  });

  it('leaves a log the audit passes', async () => {
    const audit = await runCli(['audit'], gateway.env);
    expect(audit.code, audit.stderr + audit.stdout).toBe(0);
  });
});

describe('a shadow across a restart', () => {
  it('keeps mirroring after a restart and repeats no finished comparison', async () => {
    const schema = `g_${randomBytes(6).toString('hex')}`;
    const dataDir = await mkdtemp(join(tmpdir(), 'gw-replay-'));
    const env = {
      OPENAI_API_KEY: 'sk-upstream',
      OPENAI_BASE_URL: `${openai.url}/v1`,
      ANTHROPIC_API_KEY: 'sk-sim-anthropic',
      ANTHROPIC_BASE_URL: anthropic.url,
      GATEWAY_JUDGE_MODEL: 'off',
    };
    let first: TestGateway | undefined = await startTestGateway(env, { schema, dataDir });
    let second: TestGateway | undefined;
    try {
      const account = await json(await first.admin('/accounts', { name: 'restarts' }));
      await first.admin(`/accounts/${account.account_id}/top-ups`, { cents: 1000, reference: 'p' });
      const ask = async (gw: TestGateway, content: string) => {
        const response = await fetch(`${gw.url}/v1/chat/completions`, {
          method: 'POST',
          headers: { authorization: `Bearer ${account.key}`, 'content-type': 'application/json' },
          body: JSON.stringify({ model: SOURCE, messages: [{ role: 'user', content }] }),
        });
        expect(response.status).toBe(200);
        return response.headers.get('x-request-id') as string;
      };
      const get = async (gw: TestGateway, path: string) =>
        json(await fetch(`${gw.url}/v1${path}`, { headers: { authorization: `Bearer ${account.key}` } }));
      const sourceId = await ask(first, 'seed');
      await eventually(
        () => get(first as TestGateway, `/requests/${sourceId}`),
        (r) => r.response_body != null,
        5000,
      );
      const created = await fetch(`${first.url}/v1/replays`, {
        method: 'POST',
        headers: { authorization: `Bearer ${account.key}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          source_request_id: sourceId,
          target_model: TARGET,
          shadow: true,
          sample_rate: 1,
        }),
      });
      const replay = await json(created);
      expect(replay.scoring).toBe('similarity');
      for (let i = 0; i < 3; i++) await ask(first, `before ${i}`);
      await eventually(
        () => get(first as TestGateway, `/replays/${replay.id}`),
        (r) => r.shadow.count === 3,
        15_000,
      );
      await first.close();
      first = undefined;
      second = await startTestGateway(env, { schema, dataDir });
      for (let i = 0; i < 2; i++) await ask(second, `after ${i}`);
      const after = await eventually(
        () => get(second as TestGateway, `/replays/${replay.id}`),
        (r) => r.shadow.count === 5,
        15_000,
      );
      expect(after).toMatchObject({ status: 'shadowing', shadow: { count: 5, sample_rate: 1 } });
      await new Promise((resolve) => setTimeout(resolve, 1000));
      const { rows } = await second.runtime.database.pool.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM charges WHERE kind = 'settled' AND request_id LIKE $1`,
        [`${replay.id}-shadow-%`],
      );
      expect(rows[0]?.n).toBe(5);
    } finally {
      await first?.close();
      await second?.close();
      await dropSchema(schema);
      await rm(dataDir, { recursive: true, force: true });
    }
  });

  it('runs each comparison once when two gateways follow the same log', async () => {
    const schema = `g_${randomBytes(6).toString('hex')}`;
    const dataDir = await mkdtemp(join(tmpdir(), 'gw-replay-'));
    const env = {
      OPENAI_API_KEY: 'sk-upstream',
      OPENAI_BASE_URL: `${openai.url}/v1`,
      ANTHROPIC_API_KEY: 'sk-sim-anthropic',
      ANTHROPIC_BASE_URL: anthropic.url,
      GATEWAY_JUDGE_MODEL: 'off',
    };
    const one = await startTestGateway(env, { schema, dataDir });
    const two = await startTestGateway(env, { schema, dataDir });
    try {
      const account = await json(await one.admin('/accounts', { name: 'twice' }));
      await one.admin(`/accounts/${account.account_id}/top-ups`, { cents: 1000, reference: 'p' });
      const headers = { authorization: `Bearer ${account.key}`, 'content-type': 'application/json' };
      const ask = async (content: string) => {
        const response = await fetch(`${one.url}/v1/chat/completions`, {
          method: 'POST',
          headers,
          body: JSON.stringify({ model: SOURCE, messages: [{ role: 'user', content }] }),
        });
        return response.headers.get('x-request-id') as string;
      };
      const get = async (path: string) => json(await fetch(`${one.url}/v1${path}`, { headers }));
      const sourceId = await ask('seed');
      await eventually(
        () => get(`/requests/${sourceId}`),
        (r) => r.response_body != null,
        5000,
      );
      const replay = await json(
        await fetch(`${one.url}/v1/replays`, {
          method: 'POST',
          headers,
          body: JSON.stringify({
            source_request_id: sourceId,
            target_model: TARGET,
            shadow: true,
            sample_rate: 1,
          }),
        }),
      );
      await Promise.all(Array.from({ length: 8 }, (_, i) => ask(`both ${i}`)));
      await eventually(
        () => get(`/replays/${replay.id}`),
        (r) => r.shadow.count === 8,
        15_000,
      );
      await new Promise((resolve) => setTimeout(resolve, 1500));
      expect((await get(`/replays/${replay.id}`)).shadow.count).toBe(8);
      const { rows } = await one.runtime.database.pool.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM charges WHERE kind = 'settled' AND request_id LIKE $1`,
        [`${replay.id}-shadow-%`],
      );
      expect(rows[0]?.n).toBe(8);
    } finally {
      await one.close();
      await two.close();
      await dropSchema(schema);
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});
