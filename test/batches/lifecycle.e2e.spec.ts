import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type OpenAI from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import { priceCharge } from '../../src/contracts/money.ts';
import { dropSchema } from '../support/database.ts';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';
import { chatLine, type FilesWorld, jsonl, startFilesWorld, waitForStatus } from './support.ts';

const lines = (n: number) =>
  Array.from({ length: n }, (_, i) => chatLine(`line-${i + 1}`, `question ${i + 1}`)).join('\n');

/** Every upstream call of the next `n` takes `ms`, so that a test can act while a batch is half done. */
function slowUpstream(world: FilesWorld, n: number, ms: number) {
  for (let i = 0; i < n; i++) world.openai.script({ kind: 'slow_first_byte', ms });
}

async function waitForCompleted(client: OpenAI, batchId: string, atLeast: number) {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const batch = await client.batches.retrieve(batchId);
    if (batch.request_counts && batch.request_counts.completed >= atLeast) return batch;
    if (Date.now() > deadline) throw new Error(`batch ${batchId} did not reach ${atLeast} completed lines`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

async function chargesOf(gateway: TestGateway, batchId: string) {
  const { rows } = await gateway.runtime.database.pool.query<{ request_id: string; discount: string }>(
    `SELECT request_id, discount FROM charges WHERE kind = 'settled' AND starts_with(request_id, $1)`,
    [`${batchId}-`],
  );
  return rows;
}

const create = (client: OpenAI, fileId: string) =>
  client.batches.create({
    input_file_id: fileId,
    endpoint: '/v1/chat/completions',
    completion_window: '24h',
  });

describe('batch lifecycle', () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  it('cancels: lines already done stay billed and in the output, the rest go to the error file', async () => {
    const world = await startFilesWorld({ GATEWAY_BATCH_CONCURRENCY: '1' });
    cleanups.push(() => world.close());
    slowUpstream(world, 8, 150);
    const batch = await create(world.client, (await world.upload(lines(8))).id);
    await waitForCompleted(world.client, batch.id, 2);

    const cancelling = await world.client.batches.cancel(batch.id);
    expect(cancelling.status).toBe('cancelling');
    expect(cancelling.cancelling_at).toBeTypeOf('number');
    const cancelled = await waitForStatus(world.client, batch.id, (s) => s === 'cancelled');
    expect(cancelled.cancelled_at).toBeTypeOf('number');
    const { total, completed, failed } = cancelled.request_counts ?? { total: 0, completed: 0, failed: 0 };
    expect(total).toBe(8);
    expect(completed).toBeGreaterThanOrEqual(2);
    expect(completed).toBeLessThan(8);
    expect(completed + failed).toBe(8);

    const output = jsonl(await (await world.client.files.content(cancelled.output_file_id as string)).text());
    expect(output).toHaveLength(completed);
    const errors = jsonl(await (await world.client.files.content(cancelled.error_file_id as string)).text());
    expect(errors).toHaveLength(failed);
    for (const line of errors) expect(line.error.code).toBe('batch_cancelled');
    expect((await chargesOf(world.gateway, batch.id)).length).toBe(completed);

    // Cancelling again is harmless.
    expect((await world.client.batches.cancel(batch.id)).status).toBe('cancelled');
  });

  it('expires after the 24-hour window: finished lines are kept, the rest are batch_expired', async () => {
    let offsetMs = 0;
    const clock = () => new Date(Date.now() + offsetMs);
    const world = await startFilesWorld({ GATEWAY_BATCH_CONCURRENCY: '1' }, { clock });
    cleanups.push(() => world.close());
    slowUpstream(world, 6, 150);
    const batch = await create(world.client, (await world.upload(lines(6))).id);
    await waitForCompleted(world.client, batch.id, 1);
    offsetMs = 25 * 3600 * 1000;

    const expired = await waitForStatus(world.client, batch.id, (s) => s === 'expired');
    expect(expired.expired_at).toBeGreaterThanOrEqual(batch.expires_at as number);
    const { completed, failed } = expired.request_counts ?? { completed: 0, failed: 0 };
    expect(completed).toBeGreaterThanOrEqual(1);
    expect(completed + failed).toBe(6);
    expect(failed).toBeGreaterThan(0);
    const output = jsonl(await (await world.client.files.content(expired.output_file_id as string)).text());
    expect(output).toHaveLength(completed);
    const errors = jsonl(await (await world.client.files.content(expired.error_file_id as string)).text());
    expect(errors.map((line) => line.error.code)).toEqual(Array(failed).fill('batch_expired'));
    expect(errors[0].error.message).toBe(
      'This request could not be executed before the completion window expired.',
    );
    expect((await chargesOf(world.gateway, batch.id)).length).toBe(completed);
  });

  it('resumes after a restart in the middle: the batch completes and each line is billed once', async () => {
    const schema = `g_${randomBytes(6).toString('hex')}`;
    const dataDir = await mkdtemp(join(tmpdir(), 'gw-batch-restart-'));
    cleanups.push(async () => {
      await dropSchema(schema);
      await rm(dataDir, { recursive: true, force: true });
    });
    const world = await startFilesWorld({ GATEWAY_BATCH_CONCURRENCY: '1' }, { schema, dataDir });
    cleanups.push(() => world.openai.close());
    slowUpstream(world, 10, 100);
    const batch = await create(world.client, (await world.upload(lines(10))).id);
    await waitForCompleted(world.client, batch.id, 3);
    await world.gateway.close();
    const doneBefore = world.openai.requests.length;
    expect(doneBefore).toBeLessThan(10);

    const second = await startTestGateway(world.env, { schema, dataDir, workerIntervalsMs: { batches: 50 } });
    cleanups.push(() => second.close());
    const client = world.clientFor(world.key, second);
    const done = await waitForStatus(client, batch.id, (s) => s === 'completed');
    expect(done.request_counts).toEqual({ total: 10, completed: 10, failed: 0 });

    const output = jsonl(await (await client.files.content(done.output_file_id as string)).text());
    expect(output.map((line) => line.custom_id).sort()).toEqual(
      Array.from({ length: 10 }, (_, i) => `line-${i + 1}`).sort(),
    );
    const charges = await chargesOf(second, batch.id);
    expect(charges).toHaveLength(10);
    expect(new Set(charges.map((c) => c.request_id)).size).toBe(10);
    // No line was sent upstream twice.
    expect(world.openai.requests.filter((r) => r.path === '/v1/chat/completions')).toHaveLength(10);
  });

  it('a line charged just before a stop, with no recorded result, is not run or charged again', async () => {
    const schema = `g_${randomBytes(6).toString('hex')}`;
    const dataDir = await mkdtemp(join(tmpdir(), 'gw-batch-restart-'));
    cleanups.push(async () => {
      await dropSchema(schema);
      await rm(dataDir, { recursive: true, force: true });
    });
    const world = await startFilesWorld({ GATEWAY_BATCH_CONCURRENCY: '1' }, { schema, dataDir });
    cleanups.push(() => world.openai.close());
    slowUpstream(world, 6, 100);
    const batch = await create(world.client, (await world.upload(lines(6))).id);
    await waitForCompleted(world.client, batch.id, 2);
    await world.gateway.close();

    const second = await startTestGateway(world.env, {
      schema,
      dataDir,
      workerIntervalsMs: { batches: 1000 },
    });
    cleanups.push(() => second.close());
    // What a stop between a line's charge and its recorded result leaves behind: the charge of line 6 alone.
    const { spending } = second.runtime;
    const auth = { keyId: 'key_crash', accountId: world.accountId, keyHash: '', subAccountId: null };
    const hold = await spending.reserve(auth, {
      requestId: `${batch.id}-6`,
      tag: null,
      minNanos: 1000n,
      maxNanos: 1000n,
    });
    const charge = priceCharge(
      [{ item: 'output_tokens', quantity: 1, unitPriceNanosPerMillion: 1_000_000_000n }],
      'batch',
    );
    await spending.settle(hold, {
      actualNanos: charge.chargedNanos,
      model: 'openai/gpt-4o-mini',
      provider: 'openai',
      charge,
      usageReported: true,
      units: 1,
    });

    const client = world.clientFor(world.key, second);
    const done = await waitForStatus(client, batch.id, (s) => s === 'completed');
    expect(done.request_counts).toEqual({ total: 6, completed: 5, failed: 1 });
    const errors = jsonl(await (await client.files.content(done.error_file_id as string)).text());
    expect(errors).toMatchObject([{ custom_id: 'line-6', response: null, error: { code: 'result_lost' } }]);
    expect(await chargesOf(second, batch.id)).toHaveLength(6);
    expect(world.openai.requests.filter((r) => r.path === '/v1/chat/completions')).toHaveLength(5);
  });

  it('two gateways on one store: only one works the batch, and no line runs twice', async () => {
    const schema = `g_${randomBytes(6).toString('hex')}`;
    cleanups.push(() => dropSchema(schema));
    const world = await startFilesWorld({}, { schema });
    cleanups.push(() => world.close());
    const second = await startTestGateway(world.env, {
      schema,
      dataDir: world.gateway.env.GATEWAY_DATA_DIR,
      workerIntervalsMs: { batches: 50 },
    });
    cleanups.push(() => second.close());
    const batch = await create(world.client, (await world.upload(lines(12))).id);
    const done = await waitForStatus(world.client, batch.id, (s) => s === 'completed');
    expect(done.request_counts).toEqual({ total: 12, completed: 12, failed: 0 });
    expect(await chargesOf(world.gateway, batch.id)).toHaveLength(12);
    expect(world.openai.requests.filter((r) => r.path === '/v1/chat/completions')).toHaveLength(12);
  });
});
