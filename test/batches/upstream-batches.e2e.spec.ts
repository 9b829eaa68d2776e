import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../support/gateway.ts';
import { json } from '../support/json.ts';
import { jsonl, waitForStatus } from './support.ts';
import {
  batchRateCharge,
  calls,
  chargesOf,
  type Funded,
  fundedGateway,
  line,
  openHolds,
  type Sims,
  startSims,
  submit,
} from './upstream-support.ts';

const MINI = { input: 150_000_000n, output: 600_000_000n };
const SONNET = { input: 3_000_000_000n, output: 15_000_000_000n };
const FLASH = { input: 100_000_000n, output: 400_000_000n };

let sims: Sims;
let world: Funded;
beforeAll(async () => {
  sims = await startSims();
  world = await fundedGateway(sims.env);
});
afterAll(async () => {
  await world?.gateway.close();
  await sims?.close();
});

const pool = () => world.gateway.runtime.database.pool;
const auth = () => ({ authorization: `Bearer ${world.key}` });

describe('lines of a provider with a batch API go to that API, settled at its batch rates', () => {
  it('OpenAI: one upstream batch through the Files and Batch APIs, no chat call; each line charged from its usage', async () => {
    const tag = `openai-${Date.now()}`;
    const chatBefore = calls(sims.openai, 'POST', /^\/v1\/chat\/completions$/).length;
    const created = await submit(
      world.client,
      [
        line('a', 'openai/gpt-4o-mini', 'first question'),
        line('b', 'openai/gpt-4o-mini', 'second one here'),
        line('c', 'openai/gpt-4o-mini', 'third'),
      ],
      tag,
    );
    const done = await waitForStatus(world.client, created.id, (s) => s === 'completed');
    expect(done.request_counts).toEqual({ total: 3, completed: 3, failed: 0 });

    // The provider saw one file upload and one batch of three requests, and not one chat completion.
    expect(calls(sims.openai, 'POST', /^\/v1\/chat\/completions$/).length).toBe(chatBefore);
    const upload = calls(sims.openai, 'POST', /^\/v1\/files$/).at(-1);
    expect(upload?.headers['content-type']).toMatch(/^multipart\/form-data/);
    const upstream = [...sims.openai.batches.batches.values()].at(-1);
    expect(upstream?.requests.map((r) => r.key).sort()).toEqual(['line-1', 'line-2', 'line-3']);
    expect(upstream?.requests[0]?.call.body).toMatchObject({ model: 'gpt-4o-mini', max_tokens: 40 });

    const output = jsonl(await (await world.client.files.content(done.output_file_id as string)).text());
    expect(output.map((l) => l.custom_id).sort()).toEqual(['a', 'b', 'c']);
    const charges = await chargesOf(pool(), created.id);
    expect(charges).toHaveLength(3);
    let total = 0n;
    for (const out of output) {
      const charge = charges.find((c) => c.request_id === out.response.request_id);
      expect(out.response.body.model).toBe('openai/gpt-4o-mini');
      // The provider's usage at half the standard rates, plus the fee: 52.5% of the standard price.
      expect(charge?.discount).toBe('batch_api');
      expect(charge?.lines.map((l) => l.unitPriceNanosPerMillion)).toEqual(['75000000', '300000000']);
      expect(BigInt(charge?.charged ?? 0)).toBe(batchRateCharge(out.response.body.usage, MINI));
      total += BigInt(charge?.charged ?? 0);
      // The request log shows the same charge for the line.
      const logged = await eventually(
        async () =>
          json(
            await fetch(`${world.gateway.url}/v1/requests/${out.response.request_id}`, { headers: auth() }),
          ),
        (r) => r.cost_cents !== undefined,
        3000,
      );
      expect(logged).toMatchObject({ model: 'openai/gpt-4o-mini', tag, status: 200 });
      expect(logged.cost_cents).toBe(Number(charge?.charged) / 1e7);
    }
    const usage = await eventually(
      async () => json(await fetch(`${world.gateway.url}/v1/usage/by-tag`, { headers: auth() })),
      (report) => report.data.some((row: { tag: string }) => row.tag === tag),
      3000,
    );
    expect(usage.data.find((row: { tag: string }) => row.tag === tag)).toMatchObject({
      requests: 3,
      cost_cents: Number(total) / 1e7,
    });
    expect(await openHolds(pool(), created.id)).toBe(0);
  });

  it('Anthropic and Gemini: Message Batches and batch mode, one upstream batch per model; local lines run here', async () => {
    const anthropicChat = calls(sims.anthropic, 'POST', /^\/v1\/messages$/).length;
    const geminiChat = calls(sims.gemini, 'POST', /:generateContent$/).length;
    const created = await submit(world.client, [
      line('s1', 'anthropic/claude-sonnet-4-5', 'hello sonnet'),
      line('g1', 'google/gemini-2.0-flash', 'hello flash'),
      line('s2', 'anthropic/claude-sonnet-4-5', 'hello again sonnet'),
      line('l1', 'local/echo', 'hello local'),
      line('g2', 'google/gemini-2.0-flash', 'hello again flash'),
    ]);
    const done = await waitForStatus(world.client, created.id, (s) => s === 'completed');
    expect(done.request_counts).toEqual({ total: 5, completed: 5, failed: 0 });
    expect(calls(sims.anthropic, 'POST', /^\/v1\/messages\/batches$/).length).toBeGreaterThanOrEqual(1);
    expect(calls(sims.anthropic, 'POST', /^\/v1\/messages$/).length).toBe(anthropicChat);
    expect(calls(sims.gemini, 'POST', /:generateContent$/).length).toBe(geminiChat);
    const anthropicBatch = [...sims.anthropic.batches.batches.values()].at(-1);
    expect(anthropicBatch?.requests.map((r) => r.key)).toEqual(['line-1', 'line-3']);
    const geminiBatch = [...sims.gemini.batches.batches.values()].at(-1);
    expect(geminiBatch?.requests.map((r) => r.key)).toEqual(['line-2', 'line-5']);
    expect(
      calls(sims.gemini, 'POST', /^\/v1beta\/models\/gemini-2\.0-flash:batchGenerateContent$/).length,
    ).toBe(1);

    const output = jsonl(await (await world.client.files.content(done.output_file_id as string)).text());
    const charges = await chargesOf(pool(), created.id);
    expect(charges).toHaveLength(5);
    for (const out of output) {
      const charge = charges.find((c) => c.request_id === out.response.request_id);
      const model = out.response.body.model as string;
      if (model === 'local/echo') {
        // The built-in models pay no provider: half the normal charge, as before.
        expect(charge?.discount).toBe('batch');
        continue;
      }
      expect(charge?.discount).toBe('batch_api');
      const standard = model.startsWith('anthropic/') ? SONNET : FLASH;
      expect(BigInt(charge?.charged ?? 0)).toBe(batchRateCharge(out.response.body.usage, standard));
    }
  });
});

describe("a line the provider's batch refused", () => {
  it('is in the error file with the status and message the provider gave, as a request of its own would be', async () => {
    sims.anthropic.batches.failRequest('line-2', 400);
    const created = await submit(world.client, [
      line('ok', 'anthropic/claude-sonnet-4-5', 'served'),
      line('refused', 'anthropic/claude-sonnet-4-5', 'refused'),
    ]);
    const done = await waitForStatus(world.client, created.id, (s) => s === 'completed');
    expect(done.request_counts).toEqual({ total: 2, completed: 1, failed: 1 });
    const errors = jsonl(await (await world.client.files.content(done.error_file_id as string)).text());
    expect(errors.map((e) => e.custom_id)).toEqual(['refused']);
    // Not the gateway's own 500: the provider's refusal, converted as the served path converts it.
    expect(errors[0].response.status_code).toBe(400);
    expect(errors[0].response.body.error).toMatchObject({ type: 'invalid_request_error' });
    expect(errors[0].response.body.error.message).toMatch(/anthropic\/claude-sonnet-4-5: Invalid request\./);
    const charges = await chargesOf(pool(), created.id);
    expect(charges).toHaveLength(1);
    expect(await openHolds(pool(), created.id)).toBe(0);
    // Each line has its request record: the served one carried by its settlement, the refused one written alone.
    const recordOf = (requestId: string) =>
      eventually(
        async () => json(await fetch(`${world.gateway.url}/v1/requests/${requestId}`, { headers: auth() })),
        (r) => r.status !== undefined,
        3000,
      );
    const output = jsonl(await (await world.client.files.content(done.output_file_id as string)).text());
    const ofLine = {
      batch_id: created.id,
      endpoint: '/v1/chat/completions',
      model: 'anthropic/claude-sonnet-4-5',
    };
    expect(await recordOf(output[0].response.request_id)).toMatchObject({
      ...ofLine,
      status: 200,
      error_type: null,
      provider: 'anthropic',
      attempts: 1,
      cost_nanos: charges[0]?.charged,
      hold_id: expect.stringMatching(/^hold_/),
    });
    expect(await recordOf(errors[0].response.request_id)).toMatchObject({
      ...ofLine,
      status: 400,
      error_type: 'invalid_request_error',
      error_message: errors[0].response.body.error.message,
      provider: 'anthropic',
      attempts: 1,
      cost_nanos: '0',
      hold_id: null,
    });
  });
});

describe('a submission whose reply is lost', () => {
  it('OpenAI: the batch is found by its name at the next pass and polled, not created again', async () => {
    const created = [...sims.openai.batches.batches.keys()].length;
    sims.openai.batches.loseNextCreateReply();
    const batch = await submit(world.client, [line('lost', 'openai/gpt-4o-mini', 'one')]);
    const done = await waitForStatus(world.client, batch.id, (s) => s === 'completed');
    expect(done.request_counts).toEqual({ total: 1, completed: 1, failed: 0 });
    expect(sims.openai.batches.batches.size).toBe(created + 1);
    expect(calls(sims.openai, 'GET', /^\/v1\/batches$/).length).toBeGreaterThanOrEqual(1);
    expect(await chargesOf(pool(), batch.id)).toHaveLength(1);
  });

  it('Anthropic, which cannot be asked: not sent again; the lines are released and fail', async () => {
    sims.anthropic.batches.loseNextCreateReply();
    const before = sims.anthropic.batches.batches.size;
    const batch = await submit(world.client, [line('lost', 'anthropic/claude-sonnet-4-5', 'one')]);
    const done = await waitForStatus(world.client, batch.id, (s) => s === 'completed');
    expect(done.request_counts).toEqual({ total: 1, completed: 0, failed: 1 });
    expect(sims.anthropic.batches.batches.size).toBe(before + 1);
    const errors = jsonl(await (await world.client.files.content(done.error_file_id as string)).text());
    expect(errors[0].error.code).toBe('upstream_batch_failed');
    expect(await chargesOf(pool(), batch.id)).toHaveLength(0);
    expect(await openHolds(pool(), batch.id)).toBe(0);
  });
});

describe('an upstream batch that does not serve every line', () => {
  it('expired upstream: served lines are charged, the rest released and in the error file as batch_expired', async () => {
    sims.openai.batches.endNext({ state: 'expired', served: 1 });
    const created = await submit(world.client, [
      line('x1', 'openai/gpt-4o-mini', 'one'),
      line('x2', 'openai/gpt-4o-mini', 'two'),
      line('x3', 'openai/gpt-4o-mini', 'three'),
    ]);
    const done = await waitForStatus(world.client, created.id, (s) => s === 'completed');
    expect(done.request_counts).toEqual({ total: 3, completed: 1, failed: 2 });
    const errors = jsonl(await (await world.client.files.content(done.error_file_id as string)).text());
    expect(errors.map((e) => e.error.code)).toEqual(['batch_expired', 'batch_expired']);
    expect(errors.every((e) => e.response === null)).toBe(true);
    expect(await chargesOf(pool(), created.id)).toHaveLength(1);
    expect(await openHolds(pool(), created.id)).toBe(0);
  });

  it('failed upstream: every line released, none charged, each in the error file', async () => {
    sims.anthropic.batches.endNext({ state: 'failed', message: 'the provider could not run it' });
    // Anthropic reports no failed state of its own; a batch the simulator fails serves nothing and ends.
    const created = await submit(world.client, [
      line('f1', 'anthropic/claude-sonnet-4-5', 'one'),
      line('f2', 'anthropic/claude-sonnet-4-5', 'two'),
    ]);
    const done = await waitForStatus(world.client, created.id, (s) => s === 'completed');
    expect(done.request_counts).toEqual({ total: 2, completed: 0, failed: 2 });
    expect(done.output_file_id).toBeNull();
    expect(await chargesOf(pool(), created.id)).toHaveLength(0);
    expect(await openHolds(pool(), created.id)).toBe(0);

    sims.gemini.batches.endNext({ state: 'failed', message: 'quota' });
    const gemini = await submit(world.client, [line('g', 'google/gemini-2.0-flash', 'one')]);
    const failed = await waitForStatus(world.client, gemini.id, (s) => s === 'completed');
    const errors = jsonl(await (await world.client.files.content(failed.error_file_id as string)).text());
    expect(errors[0].error).toMatchObject({ code: 'upstream_batch_failed' });
    expect(errors[0].error.message).toMatch(/quota/);
    expect(await openHolds(pool(), gemini.id)).toBe(0);
  });

  it('cancelling the gateway batch cancels the upstream one and releases its holds', async () => {
    sims.openai.batches.hold();
    try {
      const created = await submit(world.client, [
        line('c1', 'openai/gpt-4o-mini', 'one'),
        line('c2', 'openai/gpt-4o-mini', 'two'),
      ]);
      await eventually(
        async () => openHolds(pool(), created.id),
        (n) => n === 2,
        10_000,
      );
      const upstream = [...sims.openai.batches.batches.values()].at(-1);
      await world.client.batches.cancel(created.id);
      const done = await waitForStatus(world.client, created.id, (s) => s === 'cancelled');
      expect(calls(sims.openai, 'POST', new RegExp(`^/v1/batches/${upstream?.id}/cancel$`))).toHaveLength(1);
      expect(done.request_counts).toEqual({ total: 2, completed: 0, failed: 2 });
      const errors = jsonl(await (await world.client.files.content(done.error_file_id as string)).text());
      expect(errors.map((e) => e.error.code)).toEqual(['batch_cancelled', 'batch_cancelled']);
      expect(await chargesOf(pool(), created.id)).toHaveLength(0);
      expect(await openHolds(pool(), created.id)).toBe(0);
    } finally {
      sims.openai.batches.release();
    }
  });

  it('holds each line against the caps: a line with no room fails at once, the rest go upstream', async () => {
    const account = await json(await world.gateway.admin('/accounts', { name: 'tight' }));
    // Enough for one line's hold at the batch rates, not two.
    await world.gateway.admin(`/accounts/${account.account_id}/top-ups`, { cents: 1, reference: 'tight' });
    const client = new (await import('openai')).default({
      apiKey: account.key,
      baseURL: `${world.gateway.url}/v1`,
      maxRetries: 0,
    });
    const created = await submit(client, [
      line('t1', 'openai/gpt-4o-mini', 'one', 16_000),
      line('t2', 'openai/gpt-4o-mini', 'two', 16_000),
    ]);
    const done = await waitForStatus(client, created.id, (s) => s === 'completed');
    expect(done.request_counts).toEqual({ total: 2, completed: 1, failed: 1 });
    const errors = jsonl(await (await client.files.content(done.error_file_id as string)).text());
    expect(errors[0].response.status_code).toBe(402);
    expect([...sims.openai.batches.batches.values()].at(-1)?.requests).toHaveLength(1);
  });
});
