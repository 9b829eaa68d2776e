import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.ts';
import { waitForStatus } from './support.ts';
import {
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

let sims: Sims;
beforeAll(async () => {
  sims = await startSims();
});
afterAll(async () => {
  await sims?.close();
});

describe('a provider without a batch API (DeepSeek here)', () => {
  let world: Funded;
  afterAll(async () => world?.gateway.close());

  it('full_price: runs through the ordinary path, the client pays the provider cost and no fee; the audit passes', async () => {
    world = await fundedGateway({ ...sims.env, GATEWAY_BATCH_FALLBACK: 'full_price' });
    const chat = calls(sims.openai, 'POST', /^\/v1\/chat\/completions$/).length;
    const batchesBefore = sims.openai.batches.batches.size;
    const created = await submit(world.client, [
      line('d1', 'deepseek/deepseek-chat', 'one'),
      line('d2', 'deepseek/deepseek-chat', 'two'),
      line('o1', 'openai/gpt-4o-mini', 'three'),
    ]);
    const done = await waitForStatus(world.client, created.id, (s) => s === 'completed');
    expect(done.request_counts).toEqual({ total: 3, completed: 3, failed: 0 });
    // Two chat calls for DeepSeek's lines; OpenAI's line went in an upstream batch of its own.
    expect(calls(sims.openai, 'POST', /^\/v1\/chat\/completions$/).length).toBe(chat + 2);
    expect(sims.openai.batches.batches.size).toBe(batchesBefore + 1);
    expect([...sims.openai.batches.batches.values()].at(-1)?.requests.map((r) => r.key)).toEqual(['line-3']);

    const charges = await chargesOf(world.gateway.runtime.database.pool, created.id);
    const deepseek = charges.filter((c) => c.request_id !== `${created.id}-3`);
    expect(deepseek).toHaveLength(2);
    for (const charge of deepseek) {
      // Standard rates; the 5% fee is smaller than the 50% discount, so the fee is waived and no more.
      expect(charge.discount).toBe('batch_fee');
      expect(charge.lines[0]?.unitPriceNanosPerMillion).toBe('270000000');
      expect(BigInt(charge.charged)).toBe(BigInt(charge.pass));
      expect(BigInt(charge.fee)).toBeGreaterThan(0n);
    }
    expect(charges.find((c) => c.request_id === `${created.id}-3`)?.discount).toBe('batch_api');
    expect(await openHolds(world.gateway.runtime.database.pool, created.id)).toBe(0);

    const audit = await runCli(['audit'], world.gateway.env);
    expect(audit.stdout).toMatch(/^PASS +batch lines /m);
    expect(audit.stdout).toContain('Result: PASS');
  });
});

describe('GATEWAY_BATCH_FALLBACK=refuse', () => {
  let world: Funded;
  beforeAll(async () => {
    world = await fundedGateway({ ...sims.env, GATEWAY_BATCH_FALLBACK: 'refuse' });
  });
  afterAll(async () => world?.gateway.close());

  it('refuses a batch naming a model without a batch API with a 400 that names it', async () => {
    const refused = await submit(world.client, [
      line('ok', 'openai/gpt-4o-mini', 'fine'),
      line('no', 'deepseek/deepseek-chat', 'refused'),
    ]).catch(
      (error: unknown) =>
        error as { status: number; error: { message: string; type: string; param?: string } },
    );
    expect(refused).toMatchObject({ status: 400 });
    const error = (refused as { error: { message: string; type: string } }).error;
    expect(error.type).toBe('invalid_request_error');
    expect(error.message).toMatch(
      /^'input_file_id': no batch API serves deepseek\/deepseek-chat on this gateway/,
    );
  });

  it('takes a batch whose lines all have a batch API, or are served by the built-in models', async () => {
    const created = await submit(world.client, [
      line('ok', 'openai/gpt-4o-mini', 'fine'),
      line('local', 'local/echo', 'also fine'),
    ]);
    const done = await waitForStatus(world.client, created.id, (s) => s === 'completed');
    expect(done.request_counts).toEqual({ total: 2, completed: 2, failed: 0 });
  });
});
