import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type GatewayEvent, toNewEvent } from '../../events/index.ts';
import { eventually, startTestGateway, type TestGateway } from '../support/gateway.ts';
import { type Json, json } from '../support/json.ts';
import { startOpenAiUpstream } from '../upstreams/openai.ts';
import type { Upstream } from '../upstreams/types.ts';

const SOURCE = 'openai/gpt-4o-mini';
const TARGET = 'openai/gpt-4.1-nano';
const JUDGE = 'openai/gpt-4o';

let openai: Upstream;
let gateway: TestGateway;
let key: string;
let accountId: string;

const get = async (path: string, authorization = `Bearer ${key}`): Promise<Json> =>
  json(await fetch(`${gateway.url}${path}`, { headers: { authorization } }));

/** A chat completion; its request id once the request log has its bodies (a replay reads them). */
async function served(content: string): Promise<string> {
  const response = await fetch(`${gateway.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: SOURCE, messages: [{ role: 'user', content }] }),
  });
  expect(response.status).toBe(200);
  const id = response.headers.get('x-request-id') as string;
  await eventually(
    () => get(`/v1/requests/${id}`),
    (r) => r.request_body != null && r.response_body != null,
    5000,
  );
  return id;
}

beforeAll(async () => {
  openai = await startOpenAiUpstream();
  gateway = await startTestGateway({
    OPENAI_API_KEY: 'sk-upstream',
    OPENAI_BASE_URL: `${openai.url}/v1`,
    GATEWAY_JUDGE_MODEL: JUDGE,
  });
  const account = await json(await gateway.admin('/accounts', { name: 'shadowed' }));
  await gateway.admin(`/accounts/${account.account_id}/top-ups`, { cents: 5000, reference: 'p' });
  key = account.key;
  accountId = account.account_id;
});
afterAll(async () => {
  await gateway?.close();
  await openai?.close();
});

const total = (rows: Json[]) => rows.reduce((sum, row) => sum + row.cost_cents, 0);
const count = (rows: Json[]) => rows.reduce((sum, row) => sum + row.requests, 0);

describe('usage with a shadow replay', () => {
  it('by model, by tag and the balance count the same charges, the shadow’s included', async () => {
    const seed = await served('shadow seed');
    const replay = await fetch(`${gateway.url}/v1/replays`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        source_request_id: seed,
        target_model: TARGET,
        shadow: true,
        sample_rate: 1,
        max_requests: 2,
      }),
    });
    expect(replay.status).toBe(200);
    const id = (await json(replay)).id;
    for (const i of [1, 2]) await served(`later ${i}`);
    await eventually(
      () => get(`/v1/replays/${id}`),
      (r) => r.shadow.count === 2,
      10_000,
    );

    // Settled so far: the seed, the replay's target and 2 judge calls, 2 later requests, and per shadow
    // comparison a target call and 2 judge calls under the tag shadow.
    const settled = 1 + 3 + 2 + 2 * 3;
    const byTag = await eventually(
      async () => (await get('/v1/usage/by-tag')).data as Json[],
      (rows) => count(rows) === settled,
      5000,
    );
    const shadow = byTag.find((row) => row.tag === 'shadow');
    expect(shadow?.requests).toBe(6);
    const balance = await eventually(
      () => get(`/admin/accounts/${accountId}/balance`, `Bearer ${gateway.adminToken}`),
      (b) => Math.abs(b.charged_cents - total(byTag)) < 1e-9,
      5000,
    );
    expect(total(byTag)).toBeCloseTo(balance.charged_cents, 9);

    // The balance's read model may trail the usage one by a moment; it is the same money once both caught up.
    const byModel = await eventually(
      async () => (await get('/v1/usage/by-model')).data as Json[],
      (rows) => count(rows) === settled,
      5000,
    );
    expect(count(byModel)).toBe(settled);
    expect(total(byModel)).toBeCloseTo(balance.charged_cents, 9);
    const models = Object.fromEntries(byModel.map((row) => [row.model, row.requests]));
    // The source model: the seed and the later requests; the target: the replay's call and the shadow's two.
    expect(models).toEqual({ [SOURCE]: 3, [TARGET]: 3, [JUDGE]: 6 });
  });

  it('counts an overrun (cost beyond the hold) under the model it overran, as money and no request', async () => {
    const before = (await get('/v1/usage/by-model')).data as Json[];
    const target = before.find((row) => row.model === TARGET) as Json;
    // A provider that bills more than the request's worst case: far more output than max_tokens allowed.
    openai.script({
      kind: 'error',
      status: 200,
      body: {
        id: 'chatcmpl-overrun',
        object: 'chat.completion',
        created: 1,
        model: 'gpt-4.1-nano',
        choices: [{ index: 0, message: { role: 'assistant', content: 'long' }, finish_reason: 'stop' }],
        usage: { prompt_tokens: 10, completion_tokens: 100_000, total_tokens: 100_010 },
      },
    });
    const response = await fetch(`${gateway.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        model: TARGET,
        max_tokens: 5,
        messages: [{ role: 'user', content: 'overrun' }],
      }),
    });
    expect(response.status).toBe(200);
    const requestId = response.headers.get('x-request-id') as string;
    const costCents = Number(response.headers.get('x-cost-cents'));

    const { rows } = await gateway.runtime.database.pool.query<{ type: string; data: Json }>(
      `SELECT type, data FROM events WHERE type IN ('SpendSettled', 'SpendOverrun') AND data->>'requestId' = $1`,
      [requestId],
    );
    const overrun = rows.find((row) => row.type === 'SpendOverrun');
    expect(overrun?.data).toMatchObject({ model: TARGET });
    expect(BigInt(overrun?.data.overrunNanos)).toBeGreaterThan(0n);

    const after = await eventually(
      async () => (await get('/v1/usage/by-model')).data as Json[],
      (list) => (list.find((row) => row.model === TARGET)?.requests ?? 0) === target.requests + 1,
      5000,
    );
    const now = after.find((row) => row.model === TARGET) as Json;
    // The settled part and the overrun together: the whole cost the answer reported, under the one model.
    expect(now.cost_cents - target.cost_cents).toBeCloseTo(costCents, 6);
    expect(after).toHaveLength(before.length);
    const byTag = await eventually(
      async () => (await get('/v1/usage/by-tag')).data as Json[],
      (list) => Math.abs(total(list) - total(after)) < 1e-9,
      5000,
    );
    expect(count(byTag)).toBe(count(after));

    // An overrun written before the event carried its model counts under the model of its hold's settled charge.
    const legacy = { ...(overrun?.data as Json) };
    delete legacy.model;
    await gateway.runtime.store.append(
      `legacy-overrun-${requestId}`,
      [
        toNewEvent(
          { type: 'SpendOverrun', data: { ...legacy, overrunNanos: '1000' } } as GatewayEvent,
          randomUUID(),
          { now: new Date() },
        ),
      ],
      'no_stream',
    );
    const later = await eventually(
      async () => (await get('/v1/usage/by-model')).data as Json[],
      (list) => (list.find((row) => row.model === TARGET)?.cost_cents ?? 0) > now.cost_cents,
      5000,
    );
    expect((later.find((row) => row.model === TARGET) as Json).cost_cents).toBeCloseTo(
      now.cost_cents + 0.0001,
      9,
    );
    expect(later).toHaveLength(after.length);
  });
});
