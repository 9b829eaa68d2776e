import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.ts';
import { eventually } from '../support/gateway.ts';
import { type JobProviders, jobProviderEnv, startJobProviders } from '../upstreams/jobs.ts';
import { type FaultGateway, inLanes, send, startFaultGateway } from './fault-gateway.ts';

// Jobs submitted and cancelled at every moment (before a worker took them, while the provider was being asked,
// while it rendered, after it finished) against one sub-account's cap: whatever the provider received is charged,
// once; what it never received is free; the cap holds and the audit passes.

const JOBS = 60;
const LANES = 20;
const CAP_CENTS = 900;

/** The prompt a job's provider request carries, so the provider's log says which jobs reached it. */
const marker = (i: number) => `fault-job-${i}-`;

function promptOf(body: unknown): string | undefined {
  const b = body as { prompt?: unknown; instances?: { prompt?: unknown }[] } | undefined;
  const prompt = b?.prompt ?? b?.instances?.[0]?.prompt;
  return typeof prompt === 'string' ? prompt : undefined;
}

describe('cancelling jobs at every moment against a cap', () => {
  let providers: JobProviders;
  let gateway: FaultGateway;
  let key = '';
  let subId = '';

  beforeAll(async () => {
    providers = await startJobProviders();
    providers.pendingPolls = 2;
    gateway = await startFaultGateway({
      ...jobProviderEnv(providers.url),
      GATEWAY_ALLOW_PRIVATE_URLS: 'true',
    });
    const sub = (
      await send(gateway.url, {
        method: 'POST',
        path: '/v1/sub-accounts',
        headers: { authorization: `Bearer ${gateway.key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'jobs', spend_cap_cents: CAP_CENTS, rate_limit_rpm: 100_000 }),
      })
    ).json as { id: string; key: string };
    key = sub.key;
    subId = sub.id;
  });
  afterAll(async () => {
    await gateway?.stop();
    await providers?.close();
  });

  it('charges what reached the provider exactly once, frees the rest, holds the cap and passes the audit', async () => {
    const v1 = (method: string, path: string, body?: unknown) =>
      send(gateway.url, {
        method,
        path: `/v1${path}`,
        headers: {
          authorization: `Bearer ${key}`,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        timeoutMs: 60_000,
      });
    const jobs = new Map<number, string>();
    const statuses = new Map<number, number>();
    await inLanes(
      Array.from({ length: JOBS }, (_, i) => i),
      LANES,
      async (i) => {
        const kind = i % 3;
        const path = ['/videos/generations', '/audio/music', '/3d/generations'][kind] as string;
        const prompt = `${marker(i)}${kind === 1 ? 'slow-compose' : 'scene'}`;
        const accepted = await v1('POST', path, { prompt, duration: kind === 0 ? 4 : 10 });
        statuses.set(accepted.status, (statuses.get(accepted.status) ?? 0) + 1);
        if (accepted.status !== 202) return;
        const id = (accepted.json as { id: string }).id;
        jobs.set(i, id);
        // Cancelled at once, while a worker hands it over, while it renders, or after it ended (a 409).
        await new Promise((resolve) => setTimeout(resolve, (i * 397) % 7_000));
        await v1('DELETE', `/jobs/${id}`);
      },
    );
    const views = new Map<number, Record<string, unknown>>();
    for (const [i, id] of jobs) {
      views.set(
        i,
        await eventually(
          async () => (await v1('GET', `/jobs/${id}`)).json as Record<string, unknown>,
          (job) =>
            (job.status === 'completed' || job.status === 'failed') &&
            (job.cancellation as { charge?: string } | null)?.charge !== 'pending',
          60_000,
        ),
      );
    }
    const received = new Set<number>();
    for (const request of providers.requests) {
      if (request.method !== 'POST') continue;
      const found = /^fault-job-(\d+)-/.exec(promptOf(request.body) ?? '');
      if (found) received.add(Number(found[1]));
    }
    const uncharged = [...views].filter(([i, job]) => received.has(i) && !((job.cost_cents as number) > 0));
    const chargedUnreceived = [...views].filter(
      ([i, job]) => !received.has(i) && (job.cost_cents as number) > 0,
    );
    const jobCents = [...views.values()].reduce((sum, job) => sum + (job.cost_cents as number), 0);
    const spent = await eventually(
      async () =>
        (
          (
            await send(gateway.url, {
              method: 'GET',
              path: `/v1/sub-accounts/${subId}`,
              headers: { authorization: `Bearer ${gateway.key}` },
            })
          ).json as { spent_cents: number }
        ).spent_cents,
      (cents) => Math.abs(cents - jobCents) < 0.01,
      10_000,
    );
    const audit = await runCli(['audit'], gateway.env);
    const count = (what: (job: Record<string, unknown>) => boolean) =>
      [...views.values()].filter(what).length;
    console.log(
      `FAULTS job-cancels jobs=${JOBS} accepted=${jobs.size} statuses=${[...statuses].map(([s, n]) => `${s}:${n}`).join(',')} ` +
        `received_by_provider=${received.size} completed=${count((j) => j.status === 'completed')} ` +
        `cancelled_free=${count((j) => (j.cancellation as { charge?: string } | null)?.charge === 'none')} ` +
        `cancelled_charged=${count((j) => (j.cancellation as { charge?: string } | null)?.charge === 'charged')} ` +
        `received_uncharged=${uncharged.length} charged_unreceived=${chargedUnreceived.length} ` +
        `jobs_cents=${jobCents.toFixed(4)} spent_cents=${spent} cap_cents=${CAP_CENTS} audit_exit=${audit.code}`,
    );
    if (audit.code !== 0) console.log(`FAULTS job-cancels audit said: ${audit.stdout.slice(0, 1500)}`);
    expect(uncharged).toEqual([]);
    expect(chargedUnreceived).toEqual([]);
    expect(spent).toBeCloseTo(jobCents, 2);
    expect(spent).toBeLessThanOrEqual(CAP_CENTS);
    expect(audit.code).toBe(0);
  });
});
