import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dropSchema } from '../support/database.ts';
import { eventually, startTestGateway, type TestGateway } from '../support/gateway.ts';
import type { Json } from '../support/json.ts';
import { startOpenAiUpstream } from '../upstreams/openai.ts';
import type { Upstream } from '../upstreams/types.ts';
import { api, behave, CHEAP, CHEAPEST, dataset, EXPENSIVE, ended, JUDGE, question } from './support.ts';

/**
 * Issue 30, item 3: a run resumed after a restart reads back the calls charged before it, by their request ids.
 * A client that sends chats with `X-Request-Id: <eval id>-1-<item>-1` must not have its answers taken for the
 * second candidate's: a client's id is never a request's id, so it cannot stand for one of the eval's calls.
 */
let openai: Upstream;
const ITEMS = 10;
const PLANTED = [4, 5, 6, 7, 8, 9];

const upstreamEnv = () => ({
  OPENAI_API_KEY: 'sk-upstream',
  OPENAI_BASE_URL: `${openai.url}/v1`,
  GATEWAY_JUDGE_MODEL: JUDGE,
});

beforeAll(async () => {
  openai = await startOpenAiUpstream();
  behave(openai);
});
afterAll(async () => {
  await openai?.close();
});

describe("an eval resumed after a restart, with chats planted under its calls' ids", () => {
  let first: TestGateway | undefined;
  let second: TestGateway | undefined;
  const schema = `g_${randomBytes(6).toString('hex')}`;
  let dataDir: string;

  afterAll(async () => {
    await first?.close().catch(() => undefined);
    await second?.close();
    await dropSchema(schema);
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it("takes no client's answer for a candidate's, and keeps the planted chats apart, echoed and searchable", async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'gw-evals-planted-'));
    // The second candidate (index 1, always wrong) is slow: the first gateway stops with its later items unanswered.
    openai.behave?.('gpt-4.1-nano', { delayMs: 1500, reply: () => 'no idea' });
    first = await startTestGateway(upstreamEnv(), { schema, dataDir });
    const account = (await (await first.admin('/accounts', { name: 'planted' })).json()) as Json;
    await first.admin(`/accounts/${account.account_id}/top-ups`, { cents: 10_000, reference: 'p' });
    const call = api(first);
    const created = await call(account.key, 'POST', '/evals', {
      name: 'planted',
      candidate_models: [CHEAP, CHEAPEST],
      dataset: dataset(ITEMS),
      metric: 'quality',
    });
    const id = created.body.id as string;
    await eventually(
      async () => (await call(account.key, 'GET', `/evals/${id}`)).body,
      (e) => e.calls_done >= 4,
      20_000,
    );
    // Right answers, sent under the ids of the slow candidate's calls on items not answered yet.
    const planted = new Map<number, string>();
    for (const item of PLANTED) {
      const plantedId = `${id}-1-${item}-1`;
      const chat = await call(
        account.key,
        'POST',
        '/chat/completions',
        { model: EXPENSIVE, messages: [{ role: 'user', content: question(item) }] },
        { 'x-request-id': plantedId },
      );
      expect(chat.status).toBe(200);
      expect(chat.headers.get('x-request-id')).toBe(plantedId);
      planted.set(item, chat.headers.get('x-gw-request-id') as string);
    }
    await first.close();
    first = undefined;

    openai.behave?.('gpt-4.1-nano', { reply: () => 'no idea' });
    second = await startTestGateway(upstreamEnv(), { schema, dataDir });
    const e = await ended(second, account.key, id);
    expect(e).toMatchObject({ status: 'completed', calls_done: 2 * ITEMS, winner_model: CHEAP, tie: false });
    const { rows } = await second.runtime.database.pool.query<{ data: Json }>(
      `SELECT data FROM events WHERE stream = $1 AND type = 'EvalItemScored' ORDER BY revision`,
      [`eval-${id}`],
    );
    const slow = rows.map((r) => r.data).filter((d) => d.model === CHEAPEST);
    expect(slow).toHaveLength(ITEMS);
    // Every answer of the slow candidate is its own: none was read back from a planted chat.
    for (const scored of slow) expect(scored).toMatchObject({ output: 'no idea', recovered: false });

    const read = api(second);
    for (const [item, own] of planted) {
      const plantedId = `${id}-1-${item}-1`;
      // The eval's call has the id; the planted chat keeps it as its client's, beside its own.
      const byId = await eventually(
        async () => (await read(account.key, 'GET', `/requests/${plantedId}`)).body,
        (r) => r.model === CHEAPEST,
        5000,
      );
      expect(byId).toMatchObject({ id: plantedId, model: CHEAPEST, client_request_id: null });
      const listed = (await read(account.key, 'GET', `/requests?client_request_id=${plantedId}`)).body;
      expect(listed.data.map((r: Json) => [r.id, r.model, r.client_request_id])).toEqual([
        [own, EXPENSIVE, plantedId],
      ]);
    }
  }, 120_000);
});
