import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toNewEvent } from '../../events/index.ts';
import { jobStream } from '../../events/job.ts';
import { nanosToCents, priceCharge } from '../../src/contracts/money.ts';
import { eventually, startTestGateway, type TestGateway } from '../support/gateway.ts';
import { endedHolds } from '../support/holds.ts';
import { type Json, json } from '../support/json.ts';
import { type JobProviders, jobProviderEnv, MUSIC_BYTES, startJobProviders } from '../upstreams/jobs.ts';

// A cancel stops the gateway's polling, not the provider's work: once a worker has handed a job over, the
// provider bills it, and so does the gateway. Before hand-off a cancel is free.

let providers: JobProviders;
let gateway: TestGateway;
let key: string;

const call = (k: string, method: string, path: string, body?: unknown) =>
  fetch(`${gateway.url}/v1${path}`, {
    method,
    headers: {
      authorization: `Bearer ${k}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });

/** Dollars per unit times units, with the platform fee, in cents (as the ledger rounds it). */
const priced = (dollarsPerUnit: string, units: number) => {
  const [w = '0', f = ''] = dollarsPerUnit.split('.');
  const nanos = BigInt(w) * 1_000_000_000n + BigInt(f.padEnd(9, '0'));
  return nanosToCents(
    priceCharge([{ item: 'u', quantity: units, unitPriceNanosPerMillion: nanos * 1_000_000n }]).chargedNanos,
  );
};
const EIGHT_SECONDS_OF_VEO = priced('0.15', 8);

const jobOf = async (k: string, id: string) => json(await call(k, 'GET', `/jobs/${id}`));

/** Waits until the provider has been asked about the job's work: it is in the provider's hands. */
async function inProviderHands(k: string, id: string, polled: (path: string) => boolean): Promise<void> {
  const before = providers.requests.length;
  await eventually(
    async () => jobOf(k, id),
    (job) => job.status === 'processing' && providers.requests.slice(before).some((r) => polled(r.path)),
    15_000,
  );
}

async function subAccount(capCents: number): Promise<{ id: string; key: string }> {
  const created = await json(
    await call(key, 'POST', '/sub-accounts', { name: `cancels-${Date.now()}`, spend_cap_cents: capCents }),
  );
  return { id: created.id, key: created.key };
}

/** What the sub-account's record says it spent, once the read model shows `expected` (it follows the log). */
const spentCents = async (subId: string, expected: number) =>
  (
    await eventually(
      async () => json(await call(key, 'GET', `/sub-accounts/${subId}`)),
      (sub) => sub.spent_cents === expected,
      5_000,
    )
  ).spent_cents;

/** How the job's hold ended, by the request that made it. */
const holdEnd = (requestId: string) => endedHolds(gateway.runtime.database.pool, requestId);

beforeAll(async () => {
  providers = await startJobProviders();
  gateway = await startTestGateway(
    {
      ...jobProviderEnv(providers.url),
      GATEWAY_ALLOW_PRIVATE_URLS: 'true',
      GATEWAY_UPSTREAM_TIMEOUT_MS: '5000',
    },
    { workerIntervalsMs: { jobs: 30, webhooks: 30 } },
  );
  const account = await json(await gateway.admin('/accounts', { name: 'cancels' }));
  await gateway.admin(`/accounts/${account.account_id}/top-ups`, { cents: 100_000, reference: 'funding' });
  key = account.key;
});
afterAll(async () => {
  await gateway?.close();
  await providers?.close();
});

describe('a cancelled job is charged as the provider bills it', () => {
  it('charges a video cancelled while rendering, so a cap that fits one video buys one video', async () => {
    providers.pendingPolls = 1_000;
    try {
      const customer = await subAccount(EIGHT_SECONDS_OF_VEO + 10);
      const first = await call(customer.key, 'POST', '/videos/generations', { prompt: 'a cat', duration: 8 });
      expect(first.status).toBe(202);
      const { id } = await json(first);
      await inProviderHands(customer.key, id, (path) => path.includes('/operations/'));
      const cancelled = await call(customer.key, 'DELETE', `/jobs/${id}`);
      expect(cancelled.status).toBe(200);
      expect(await json(cancelled)).toMatchObject({
        status: 'failed',
        error: { type: 'cancelled', code: 499 },
        // Google has no cancel for Veo operations and reports nothing once the gateway stops polling: the hold.
        cancellation: { after_handoff: true, charge: 'charged', basis: 'hold' },
        cost_cents: EIGHT_SECONDS_OF_VEO,
      });
      expect(await spentCents(customer.id, EIGHT_SECONDS_OF_VEO)).toBe(EIGHT_SECONDS_OF_VEO);
      // The loop that rendered six videos for nothing ends at the second: the cap is spent.
      const second = await call(customer.key, 'POST', '/videos/generations', {
        prompt: 'a cat',
        duration: 8,
      });
      expect(second.status).toBe(402);
    } finally {
      providers.pendingPolls = 1;
    }
  });

  it('charges music cancelled while the provider composed it, and hands over the track it paid for', async () => {
    const customer = await subAccount(1_000);
    const before = providers.requests.length;
    // ElevenLabs answers the track in its response: the cancellation arrives while it composes.
    providers.script({ kind: 'slow_first_byte', ms: 1_500 });
    const { id } = await json(
      await call(customer.key, 'POST', '/audio/music', { prompt: 'a slow waltz', duration: 10 }),
    );
    await eventually(
      async () => providers.requests.slice(before).some((r) => r.path === '/v1/music'),
      (asked) => asked,
      10_000,
    );
    const cancelled = await json(await call(customer.key, 'DELETE', `/jobs/${id}`));
    expect(cancelled).toMatchObject({
      status: 'failed',
      cancellation: { after_handoff: true, charge: 'pending', basis: null },
      cost_cents: null,
    });
    const charged = await eventually(
      () => jobOf(customer.key, id),
      (job) => job.cancellation?.charge !== 'pending',
      15_000,
    );
    const tenSeconds = priced('0.013333334', 10);
    expect(charged).toMatchObject({
      status: 'failed',
      error: { type: 'cancelled' },
      cancellation: { after_handoff: true, charge: 'charged', basis: 'provider_output' },
      cost_cents: tenSeconds,
      result_file_id: expect.stringMatching(/^file-/),
    });
    expect(await (await fetch(charged.result_url)).text()).toBe(MUSIC_BYTES);
    expect(await spentCents(customer.id, tenSeconds)).toBe(tenSeconds);
  });

  it('charges nothing for a job cancelled before a worker handed it to the provider', async () => {
    const customer = await subAccount(1_000);
    // The provider turns the submission away for now: the job waits, queued, for its next attempt.
    providers.script({ kind: 'error', status: 503 });
    const accepted = await call(customer.key, 'POST', '/videos/generations', {
      prompt: 'a dog',
      duration: 4,
    });
    const { id } = await json(accepted);
    await eventually(
      () => jobOf(customer.key, id),
      (job: Json) => job.status === 'queued' && job.attempts === 1,
      15_000,
    );
    const cancelled = await json(await call(customer.key, 'DELETE', `/jobs/${id}`));
    expect(cancelled).toMatchObject({
      status: 'failed',
      error: { type: 'cancelled', code: 499 },
      cancellation: { after_handoff: false, charge: 'none', basis: 'before_handoff' },
      cost_cents: 0,
    });
    expect(await holdEnd(accepted.headers.get('x-request-id') ?? '')).toEqual(['cancelled']);
    expect(await spentCents(customer.id, 0)).toBe(0);
  });

  it('charges nothing when the provider refused a submission that was cancelled while in flight', async () => {
    const customer = await subAccount(1_000);
    const before = providers.requests.length;
    providers.script({ kind: 'slow_first_byte', ms: 1_500 });
    // The slow answer is a refusal: the provider never took the work.
    const accepted = await call(customer.key, 'POST', '/audio/music', {
      prompt: 'provider-fail please',
      duration: 5,
    });
    const { id } = await json(accepted);
    await eventually(
      async () => providers.requests.slice(before).some((r) => r.path === '/v1/music'),
      (asked) => asked,
      10_000,
    );
    await call(customer.key, 'DELETE', `/jobs/${id}`);
    const settled = await eventually(
      () => jobOf(customer.key, id),
      (job) => job.cancellation?.charge !== 'pending',
      15_000,
    );
    expect(settled).toMatchObject({
      cancellation: { after_handoff: true, charge: 'none', basis: 'not_taken' },
      cost_cents: 0,
    });
    expect(await holdEnd(accepted.headers.get('x-request-id') ?? '')).toEqual(['cancelled']);
    expect(await spentCents(customer.id, 0)).toBe(0);
  });
});

describe('a cancellation whose charge was never recorded', () => {
  it('is charged its hold by the worker a minute later, as when the cancelling gateway stopped in between', async () => {
    let now = Date.now();
    providers.pendingPolls = 1_000;
    const timed = await startTestGateway(
      { ...jobProviderEnv(providers.url), GATEWAY_ALLOW_PRIVATE_URLS: 'true' },
      { clock: () => new Date(now), workerIntervalsMs: { jobs: 30 } },
    );
    try {
      const account = await json(await timed.admin('/accounts', { name: 'stranded' }));
      await timed.admin(`/accounts/${account.account_id}/top-ups`, { cents: 1_000, reference: 'funding' });
      const get = async (id: string) =>
        json(
          await fetch(`${timed.url}/v1/jobs/${id}`, { headers: { authorization: `Bearer ${account.key}` } }),
        );
      const accepted = await fetch(`${timed.url}/v1/videos/generations`, {
        method: 'POST',
        headers: { authorization: `Bearer ${account.key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ prompt: 'stranded', duration: 8 }),
      });
      const { id } = await json(accepted);
      const before = providers.requests.length;
      await eventually(
        () => get(id),
        (job) =>
          job.status === 'processing' &&
          providers.requests.slice(before).some((r) => r.path.includes('/operations/')),
        15_000,
      );
      // The cancellation as a gateway that stopped right after recording it leaves it: no charge recorded.
      await timed.runtime.store.append(
        jobStream(id),
        [
          toNewEvent(
            { type: 'JobCancelled', data: { jobId: id, wasSubmitted: true, billable: true } },
            randomUUID(),
            { now: new Date(now) },
          ),
        ],
        'any',
      );
      expect(await get(id)).toMatchObject({ cancellation: { charge: 'pending' }, cost_cents: null });
      now += 61_000;
      const charged = await eventually(
        () => get(id),
        (job) => job.cancellation?.charge === 'charged',
        15_000,
      );
      expect(charged).toMatchObject({ cancellation: { basis: 'hold' }, cost_cents: EIGHT_SECONDS_OF_VEO });
      const balance = await eventually(
        async () =>
          json(
            await fetch(`${timed.url}/v1/balance`, { headers: { authorization: `Bearer ${account.key}` } }),
          ),
        (b) => b.cents < 1_000,
        5_000,
      );
      expect(balance.cents).toBe(Math.round(1_000 - EIGHT_SECONDS_OF_VEO));
    } finally {
      providers.pendingPolls = 1;
      await timed.close();
    }
  });
});
