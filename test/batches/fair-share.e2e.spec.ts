import type OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.ts';
import { json } from '../support/json.ts';
import { chatLine, type FilesWorld, startFilesWorld, waitForStatus } from './support.ts';

// Batches share the gateway's line slots in turns between accounts (docs/batches.md#sharing-the-gateway). The
// large batches' lines go to a model the simulator answers slowly; the small ones' to one it answers at once.
// Every assertion is on order and state (what had finished when the small batch had), never on durations.

const SLOW = 'openai/gpt-4o';
const FAST = 'openai/gpt-4o-mini';

const file = (prefix: string, n: number, model: string) =>
  Array.from({ length: n }, (_, i) => chatLine(`${prefix}-${i + 1}`, `question ${i + 1}`, { model })).join(
    '\n',
  );

const submit = async (world: FilesWorld, client: OpenAI, text: string) =>
  client.batches.create({
    input_file_id: (await world.upload(text, client)).id,
    endpoint: '/v1/chat/completions',
    completion_window: '24h',
  });

async function chargedLines(world: FilesWorld, batchId: string) {
  const { rows } = await world.gateway.runtime.database.pool.query<{ request_id: string }>(
    `SELECT request_id FROM charges WHERE kind = 'settled' AND starts_with(request_id, $1)`,
    [`${batchId}-`],
  );
  return rows.map((row) => row.request_id);
}

describe('batches share the line slots fairly', () => {
  let world: FilesWorld;
  let other: OpenAI;
  beforeAll(async () => {
    world = await startFilesWorld({ GATEWAY_BATCH_CONCURRENCY: '4' });
    const account = await json(await world.gateway.admin('/accounts', { name: 'other tenant' }));
    await world.gateway.admin(`/accounts/${account.account_id}/top-ups`, { cents: 10_000, reference: 'b' });
    other = world.clientFor(account.key);
  });
  afterAll(async () => world?.close());

  it("runs another account's 1-line batch, and the same account's, while an older large batch is in progress", async () => {
    world.openai.behave?.('gpt-4o', { delayMs: 400 });
    const large = await submit(world, world.client, file('big', 60, SLOW));
    await waitForStatus(world.client, large.id, (s) => s === 'in_progress');

    const small = await submit(world, other, file('small', 1, FAST));
    const smallDone = await waitForStatus(other, small.id, (s) => s === 'completed');
    expect(smallDone.request_counts).toEqual({ total: 1, completed: 1, failed: 0 });
    const largeMeanwhile = await world.client.batches.retrieve(large.id);
    expect(largeMeanwhile.status).toBe('in_progress');
    expect(largeMeanwhile.request_counts?.completed).toBeLessThan(60);

    // An account's own small batch takes turns with its large one too.
    const own = await submit(world, world.client, file('own', 1, FAST));
    const ownDone = await waitForStatus(world.client, own.id, (s) => s === 'completed');
    expect(ownDone.request_counts).toEqual({ total: 1, completed: 1, failed: 0 });
    expect((await world.client.batches.retrieve(large.id)).status).toBe('in_progress');

    const cancelled = await world.client.batches.cancel(large.id);
    const ended = await waitForStatus(world.client, cancelled.id, (s) => s === 'cancelled');
    const charged = await chargedLines(world, large.id);
    expect(new Set(charged).size).toBe(charged.length);
    expect(charged).toHaveLength(ended.request_counts?.completed ?? -1);
    expect(await chargedLines(world, small.id)).toEqual([`${small.id}-1`]);
  });

  it('gives an account with nothing running a batch of its own when 16 of another account are running', async () => {
    world.openai.behave?.('gpt-4o', { delayMs: 500 });
    const calls = () => world.openai.requests.filter((r) => r.path === '/v1/chat/completions').length;
    const callsBefore = calls();
    const many: OpenAI.Batch[] = [];
    for (let i = 0; i < 17; i++) many.push(await submit(world, world.client, file(`many${i}`, 6, SLOW)));
    for (const batch of many.slice(0, 16))
      await waitForStatus(world.client, batch.id, (s) => s === 'in_progress' || s === 'completed');

    const linesDone = async () => {
      let done = 0;
      for (const batch of many)
        done += (await world.client.batches.retrieve(batch.id)).request_counts?.completed ?? 0;
      return done;
    };
    const small = await submit(world, other, file('room', 1, FAST));
    const before = await linesDone();
    await waitForStatus(other, small.id, (s) => s === 'completed');
    const meanwhile = (await linesDone()) - before;
    // Had it waited for one of the 16 to end, nearly all the rest would have run first (they end together).
    expect(meanwhile).toBeLessThan((17 * 6 - before) / 2);

    // The batch that made room is taken up again from its recorded lines: every line runs and is charged once.
    for (const batch of many) {
      const done = await waitForStatus(world.client, batch.id, (s) => s === 'completed', 60_000);
      expect(done.request_counts).toEqual({ total: 6, completed: 6, failed: 0 });
      expect((await chargedLines(world, batch.id)).sort()).toEqual(
        [1, 2, 3, 4, 5, 6].map((line) => `${batch.id}-${line}`).sort(),
      );
    }
    expect(calls() - callsBefore).toBe(17 * 6 + 1);
    // One of the 16 let go to make room, and was taken a second time.
    let takes = 0;
    for (const batch of many) {
      const events = await world.gateway.runtime.store.readStream(`batch-${batch.id}`);
      takes += events.filter((event) => event.type === 'BatchStarted').length;
    }
    expect(takes).toBe(18);

    const audit = await runCli(['audit'], world.gateway.env);
    expect(audit.stdout).toMatch(/^PASS +batch lines /m);
  }, 90_000);
});
