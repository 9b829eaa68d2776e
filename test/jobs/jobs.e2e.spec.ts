import { createHmac, randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toNewEvent } from '../../events/index.ts';
import { type JobEvent, jobStream } from '../../events/job.ts';
import { nanosToCents, priceCharge } from '../../src/contracts/money.ts';
import { eventually, startTestGateway, type TestGateway } from '../support/gateway.ts';
import { endedHolds } from '../support/holds.ts';
import { type Json, json } from '../support/json.ts';
import {
  type JobProviders,
  jobProviderEnv,
  MODEL_BYTES,
  MUSIC_BYTES,
  startJobProviders,
  VIDEO_BYTES,
} from '../upstreams/jobs.ts';

let providers: JobProviders;
let gateway: TestGateway;
let key: string;
let tags = 0;
const freshTag = (what: string) => `${what}-${process.pid}-${Date.now()}-${tags++}`;

const env = () => ({
  ...jobProviderEnv(providers.url),
  GATEWAY_ALLOW_PRIVATE_URLS: 'true',
  GATEWAY_UPSTREAM_TIMEOUT_MS: '2000',
});

async function fundedKey(g: TestGateway, cents = 10_000): Promise<string> {
  const account = await json(await g.admin('/accounts', { name: 'jobs' }));
  await g.admin(`/accounts/${account.account_id}/top-ups`, { cents, reference: 'funding' });
  return account.key;
}

const call = (
  g: TestGateway,
  k: string,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
) =>
  fetch(`${g.url}/v1${path}`, {
    method,
    headers: {
      authorization: `Bearer ${k}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      ...headers,
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });

async function settled(g: TestGateway, k: string, id: string, ms = 15_000): Promise<Json> {
  return eventually(
    async () => json(await call(g, k, 'GET', `/jobs/${id}`)),
    (job) => job.status === 'completed' || job.status === 'failed',
    ms,
  );
}

async function usageOf(g: TestGateway, k: string, tag: string): Promise<Json | undefined> {
  const report = await eventually(
    async () => json(await call(g, k, 'GET', '/usage/by-tag')),
    (r) => r.data.some((row: Json) => row.tag === tag),
    10_000,
  );
  return report.data.find((row: Json) => row.tag === tag);
}

const holdStatus = (g: TestGateway, requestId: string) => endedHolds(g.runtime.database.pool, requestId);

const perUnitCents = (dollarsPerUnit: string, units: number) => {
  const [w = '0', f = ''] = dollarsPerUnit.split('.');
  const nanos = BigInt(w) * 1_000_000_000n + BigInt(f.padEnd(9, '0'));
  return nanosToCents(
    priceCharge([{ item: 'u', quantity: units, unitPriceNanosPerMillion: nanos * 1_000_000n }]).chargedNanos,
  );
};

beforeAll(async () => {
  providers = await startJobProviders();
  gateway = await startTestGateway(env(), { workerIntervalsMs: { jobs: 30, webhooks: 30 } });
  key = await fundedKey(gateway);
});
afterAll(async () => {
  await gateway?.close();
  await providers?.close();
});

describe('asynchronous generation jobs', () => {
  it('generates a video with Veo: 202, queued → processing → completed, the result stored, billed per second', async () => {
    const tag = freshTag('video');
    const response = await call(
      gateway,
      key,
      'POST',
      '/videos/generations',
      { prompt: 'a fox in the snow', duration: 6 },
      { 'x-gw-tag': tag },
    );
    expect(response.status).toBe(202);
    const accepted = await json(response);
    expect(accepted).toEqual({ id: expect.stringMatching(/^job_/), status: 'queued', object: 'job' });
    const job = await settled(gateway, key, accepted.id);
    expect(job).toMatchObject({
      id: accepted.id,
      object: 'job',
      status: 'completed',
      modality: 'video',
      model: 'google/veo-3.0-fast-generate-001',
      error: null,
      attempts: 1,
      webhook_url: null,
      result_file_id: expect.stringMatching(/^file-/),
    });
    expect(job.updated_at).toBeGreaterThanOrEqual(job.created_at);
    const video = await fetch(job.result_url);
    expect(video.status).toBe(200);
    expect(video.headers.get('content-type')).toBe('video/mp4');
    expect(await video.text()).toBe(VIDEO_BYTES);
    const submitted = providers.requests.find((r) => r.path.endsWith(':predictLongRunning'));
    expect(submitted?.body).toEqual({
      instances: [{ prompt: 'a fox in the snow' }],
      parameters: { durationSeconds: 6, aspectRatio: '16:9' },
    });
    expect((await usageOf(gateway, key, tag))?.cost_cents).toBe(perUnitCents('0.15', 6));
  });

  it('composes music with ElevenLabs and makes a 3D model with Meshy', async () => {
    const musicTag = freshTag('music');
    const music = await json(
      await call(
        gateway,
        key,
        'POST',
        '/audio/music',
        { prompt: 'lo-fi beat', duration: 12, is_instrumental: true },
        { 'x-gw-tag': musicTag },
      ),
    );
    const model = await json(
      await call(gateway, key, 'POST', '/3d/generations', { prompt: 'a wooden chest' }),
    );
    const [doneMusic, doneModel] = await Promise.all([
      settled(gateway, key, music.id),
      settled(gateway, key, model.id),
    ]);
    expect(doneMusic).toMatchObject({ status: 'completed', modality: 'music', model: 'elevenlabs/music_v1' });
    expect(await (await fetch(doneMusic.result_url)).text()).toBe(MUSIC_BYTES);
    expect(providers.requests.find((r) => r.path === '/v1/music')?.body).toEqual({
      prompt: 'lo-fi beat',
      model_id: 'music_v1',
      music_length_ms: 12_000,
      force_instrumental: true,
    });
    expect(doneModel).toMatchObject({ status: 'completed', modality: '3d', model: 'meshy/meshy-5' });
    const glb = await fetch(doneModel.result_url);
    expect(glb.headers.get('content-type')).toBe('model/gltf-binary');
    expect(await glb.text()).toBe(MODEL_BYTES);
    expect((await usageOf(gateway, key, musicTag))?.cost_cents).toBe(
      nanosToCents(
        priceCharge([{ item: 'u', quantity: 12, unitPriceNanosPerMillion: 13_333_334n * 1_000_000n }])
          .chargedNanos,
      ),
    );
  });

  it('fails a job the provider fails, with the provider error, and releases its hold', async () => {
    const response = await call(
      gateway,
      key,
      'POST',
      '/videos/generations',
      { prompt: 'provider-fail please' },
      { 'x-request-id': 'job-fail-1' },
    );
    const job = await settled(gateway, key, (await json(response)).id);
    expect(job.status).toBe('failed');
    expect(job.error).toEqual({
      message: expect.stringContaining('Video generation failed'),
      type: 'provider_error',
      code: 502,
    });
    expect(job.result_url).toBeNull();
    // The hold is the gateway's request's: its own id, not the client's X-Request-Id.
    expect(await holdStatus(gateway, response.headers.get('x-gw-request-id') as string)).toEqual(['failed']);

    // A provider that took the task and then answers its status poll with a refusal (it lost the task) failed the
    // job: the gateway's own follow-up was refused, not what the client sent.
    const lost = await json(
      await call(gateway, key, 'POST', '/3d/generations', { prompt: 'provider-lost please' }),
    );
    const ended = await settled(gateway, key, lost.id);
    expect(ended.status).toBe('failed');
    expect(ended.error).toEqual({
      message: expect.stringContaining('the provider refused to report on the job: '),
      type: 'provider_error',
      code: 502,
    });
    expect(ended.error.message).toContain('Task not found');
  });

  it('signs URLs for a job file with expires_in, refuses bad values, and the media host refuses a tampered URL', async () => {
    const accepted = await json(await call(gateway, key, 'POST', '/3d/generations', { prompt: 'a lamp' }));
    await settled(gateway, key, accepted.id);
    const signed = await json(
      await call(gateway, key, 'GET', `/files/jobs/${accepted.id}/model.glb/signed?expires_in=60`),
    );
    expect(signed).toEqual({
      url: expect.stringContaining(`/media/jobs/${accepted.id}/model.glb?`),
      expires_at: expect.any(Number),
    });
    expect(signed.expires_at - Math.floor(Date.now() / 1000)).toBeGreaterThan(55);
    expect(await (await fetch(signed.url)).text()).toBe(MODEL_BYTES);
    const tampered = signed.url.replace(
      /expires=(\d+)/,
      (_: string, n: string) => `expires=${Number(n) + 1000}`,
    );
    const refused = await fetch(tampered);
    expect(refused.status).toBe(403);
    expect((await json(refused)).error).toMatchObject({ type: 'permission_error', code: 403 });
    for (const bad of ['0', '604801', 'soon']) {
      const response = await call(
        gateway,
        key,
        'GET',
        `/files/jobs/${accepted.id}/model.glb/signed?expires_in=${bad}`,
      );
      expect(response.status).toBe(400);
      expect((await json(response)).error.message).toContain('expires_in');
    }
    expect((await call(gateway, key, 'GET', `/files/jobs/${accepted.id}/other.glb/signed`)).status).toBe(404);
    const week = await json(
      await call(gateway, key, 'GET', `/files/jobs/${accepted.id}/model.glb/signed?expires_in=604800`),
    );
    expect(week.expires_at - Math.floor(Date.now() / 1000)).toBeGreaterThan(604_700);
  });

  it('forgets its result once the client deleted the result file', async () => {
    const accepted = await json(await call(gateway, key, 'POST', '/3d/generations', { prompt: 'a vase' }));
    const done = await settled(gateway, key, accepted.id);
    expect(done).toMatchObject({ status: 'completed', result_file_id: expect.stringMatching(/^file-/) });
    const deleted = await call(gateway, key, 'DELETE', `/files/${done.result_file_id}`);
    expect(deleted.status).toBe(200);
    const after = await json(await call(gateway, key, 'GET', `/jobs/${accepted.id}`));
    expect(after).toMatchObject({ status: 'completed', result_file_id: null, result_url: null });
    // The URL signed before the deletion answers no bytes.
    expect((await fetch(done.result_url)).status).toBe(404);
  });

  it('asks the provider to stop a job cancelled while it was being submitted', async () => {
    const before = providers.requests.length;
    // The provider takes its time to accept the job: the cancellation comes in meanwhile.
    providers.script({ kind: 'slow_first_byte', ms: 1_500 });
    const accepted = await json(
      await call(gateway, key, 'POST', '/3d/generations', { prompt: 'cancelled in flight' }, {}),
    );
    const submitted = () =>
      providers.requests
        .slice(before)
        .some((r) => r.method === 'POST' && r.path === '/openapi/v2/text-to-3d');
    expect(
      await eventually(
        async () => submitted(),
        (done) => done,
        10_000,
      ),
    ).toBe(true);
    const cancelled = await call(gateway, key, 'DELETE', `/jobs/${accepted.id}`);
    expect(cancelled.status).toBe(200);
    // No provider job was recorded when it was cancelled: the worker asks the provider to stop once it learns
    // that its record of the submission is refused.
    const stopped = () =>
      providers.requests
        .slice(before)
        .some((r) => r.method === 'DELETE' && r.path.startsWith('/openapi/v2/text-to-3d/'));
    expect(
      await eventually(
        async () => stopped(),
        (done) => done,
        10_000,
      ),
    ).toBe(true);
    expect(await json(await call(gateway, key, 'GET', `/jobs/${accepted.id}`))).toMatchObject({
      status: 'failed',
      error: { type: 'cancelled' },
    });
  });

  it('cancels a job in progress: it reads failed with error type cancelled, the provider is asked to stop, the hold is charged', async () => {
    const before = providers.requests.length;
    providers.pendingPolls = 1_000;
    try {
      const submitted = await call(
        gateway,
        key,
        'POST',
        '/3d/generations',
        { prompt: 'a slow statue' },
        { 'x-request-id': 'job-cancel-1' },
      );
      const accepted = await json(submitted);
      await eventually(
        async () => json(await call(gateway, key, 'GET', `/jobs/${accepted.id}`)),
        (job) =>
          job.status === 'processing' &&
          providers.requests.slice(before).some((r) => r.method === 'GET' && r.path.includes('/text-to-3d/')),
        15_000,
      );
      const cancelled = await call(gateway, key, 'DELETE', `/jobs/${accepted.id}`);
      expect(cancelled.status).toBe(200);
      expect(await json(cancelled)).toMatchObject({
        id: accepted.id,
        status: 'failed',
        error: { type: 'cancelled', code: 499, message: expect.any(String) },
        cancellation: { after_handoff: true, charge: 'charged', basis: 'hold' },
        cost_cents: expect.any(Number),
      });
      // Meshy bills a task once it took it, deleted or not: the held model is charged.
      const heldFor = submitted.headers.get('x-gw-request-id') as string;
      expect(await holdStatus(gateway, heldFor)).toEqual(['settled']);
      // Asked by the cancellation when it finds the submission recorded, else by the worker once its record of the
      // submission is refused (cancelled while the provider was being asked).
      const asked = () =>
        providers.requests
          .slice(before)
          .some((r) => r.method === 'DELETE' && r.path.includes('/text-to-3d/'));
      expect(
        await eventually(
          async () => asked(),
          (done) => done,
          5_000,
        ),
      ).toBe(true);
      const again = await call(gateway, key, 'DELETE', `/jobs/${accepted.id}`);
      expect(again.status).toBe(409);
    } finally {
      providers.pendingPolls = 1;
    }
  });

  it('sends job.completed and job.failed to the webhook_url, signed with the creating key, and reports webhook_delivered', async () => {
    const received: { headers: Record<string, string | string[] | undefined>; body: string }[] = [];
    const receiver = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk) => {
        body += chunk;
      });
      req.on('end', () => {
        received.push({ headers: req.headers, body });
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const hook = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
    try {
      const secret = (await json(await call(gateway, key, 'GET', '/webhook-secret'))).secret;
      const ok = await json(
        await call(gateway, key, 'POST', '/3d/generations', { prompt: 'a hooked vase', webhook_url: hook }),
      );
      const bad = await json(
        await call(gateway, key, 'POST', '/videos/generations', {
          prompt: 'provider-fail hooked',
          webhook_url: hook,
        }),
      );
      await eventually(
        async () => received.length,
        (n) => n >= 2,
        15_000,
      );
      const events = received.map((r) => ({ ...r, event: JSON.parse(r.body) }));
      const completed = events.find((e) => e.event.type === 'job.completed');
      const failed = events.find((e) => e.event.type === 'job.failed');
      expect(completed?.event).toMatchObject({
        type: 'job.completed',
        data: { id: ok.id, status: 'completed', result_file_id: expect.any(String) },
      });
      expect(failed?.event).toMatchObject({
        type: 'job.failed',
        data: { id: bad.id, status: 'failed', error: { type: 'provider_error' } },
      });
      for (const delivery of [completed, failed]) {
        const signature = String(delivery?.headers['x-gw-signature']);
        const [, t, v1] = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(signature) ?? [];
        expect(v1).toBe(createHmac('sha256', secret).update(`${t}.${delivery?.body}`).digest('hex'));
        expect(delivery?.headers['x-gw-attempt']).toBe('1');
        expect(delivery?.headers['x-gw-event-type']).toBe(delivery?.event.type);
      }
      const job = await eventually(
        async () => json(await call(gateway, key, 'GET', `/jobs/${ok.id}`)),
        (j) => j.webhook_delivered === true,
        15_000,
      );
      expect(job).toMatchObject({ webhook_url: hook, webhook_delivered: true });
      const file = await json(await call(gateway, key, 'GET', `/files/${job.result_file_id}`));
      expect(file).toMatchObject({
        id: job.result_file_id,
        object: 'file',
        purpose: 'job_output',
        filename: 'model.glb',
      });
      expect(await (await call(gateway, key, 'GET', `/files/${job.result_file_id}/content`)).text()).toBe(
        MODEL_BYTES,
      );
    } finally {
      await new Promise((resolve) => receiver.close(resolve));
    }
  });

  it('refuses bad requests in the error shape, naming the field', async () => {
    const cases: [string, unknown, number, string][] = [
      ['/videos/generations', {}, 400, 'prompt'],
      ['/videos/generations', { prompt: 1 }, 400, 'prompt'],
      ['/videos/generations', { prompt: 'x', duration: 'long' }, 400, 'duration'],
      ['/videos/generations', { prompt: 'x', model: 'google/no-such-veo' }, 404, 'no-such-veo'],
      ['/videos/generations', { prompt: 'x', model: 'openai/gpt-4o-mini' }, 400, '/v1/chat/completions'],
      ['/audio/music', { prompt: 'x', model: 'google/veo-3.0-generate-001' }, 400, '/v1/videos/generations'],
      ['/3d/generations', { prompt: 'x', webhook_url: 'ftp://example.com/hook' }, 400, 'webhook_url'],
      ['/videos/generations', { prompt: 'x', image_url: 'file:///etc/passwd' }, 400, 'image_url'],
    ];
    for (const [path, body, status, mention] of cases) {
      const response = await call(gateway, key, 'POST', path, body);
      expect(response.status, JSON.stringify(body)).toBe(status);
      const error = (await json(response)).error;
      expect(error.code).toBe(status);
      expect(error.message).toContain(mention);
    }
    expect((await call(gateway, key, 'GET', '/jobs/job_0123')).status).toBe(404);
  });

  it("keeps one account's jobs from another's keys (404)", async () => {
    const accepted = await json(
      await call(gateway, key, 'POST', '/3d/generations', { prompt: 'a private cube' }),
    );
    const other = await fundedKey(gateway, 100);
    const response = await call(gateway, other, 'GET', `/jobs/${accepted.id}`);
    expect(response.status).toBe(404);
    expect((await call(gateway, other, 'DELETE', `/jobs/${accepted.id}`)).status).toBe(404);
  });

  it('refuses private webhook and image URLs when the operator has not allowed them', async () => {
    const strict = await startTestGateway(jobProviderEnv(providers.url), { workerIntervalsMs: { jobs: 30 } });
    try {
      const k = await fundedKey(strict);
      for (const [field, url] of [
        ['webhook_url', 'http://127.0.0.1:9/hook'],
        ['webhook_url', 'http://169.254.169.254/latest/meta-data'],
        ['image_url', 'http://localhost/cat.png'],
        ['image_url', 'http://[::1]/cat.png'],
        ['webhook_url', 'http://10.0.0.7/hook'],
      ]) {
        const response = await call(strict, k, 'POST', '/videos/generations', {
          prompt: 'x',
          [field as string]: url,
        });
        expect(response.status, url).toBe(400);
        expect((await json(response)).error.message).toContain(field);
      }
    } finally {
      await strict.close();
    }
  });
});

describe('signed URLs over time', () => {
  it('serve the bytes until expires_at and refuse them after', async () => {
    let now = Date.now();
    const timed = await startTestGateway(env(), {
      clock: () => new Date(now),
      workerIntervalsMs: { jobs: 30 },
    });
    try {
      const k = await fundedKey(timed);
      const accepted = await json(await call(timed, k, 'POST', '/3d/generations', { prompt: 'a clock' }));
      await settled(timed, k, accepted.id);
      const signed = await json(
        await call(timed, k, 'GET', `/files/jobs/${accepted.id}/model.glb/signed?expires_in=60`),
      );
      expect(signed.expires_at).toBe(Math.floor(now / 1000) + 60);
      now += 59_000;
      expect((await fetch(signed.url)).status).toBe(200);
      now += 2_000;
      const expired = await fetch(signed.url);
      expect(expired.status).toBe(403);
      expect((await json(expired)).error.message).toContain('expired');
    } finally {
      await timed.close();
    }
  });
});

describe('a job whose webhook was never requested', () => {
  it('gets it from the sweep once a minute has passed since it ended', async () => {
    let now = Date.now();
    const received: string[] = [];
    const receiver = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk) => {
        body += chunk;
      });
      req.on('end', () => {
        received.push(body);
        res.writeHead(200).end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const hook = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
    const timed = await startTestGateway(env(), {
      clock: () => new Date(now),
      workerIntervalsMs: { jobs: 30, webhooks: 30 },
    });
    try {
      const account = await json(await timed.admin('/accounts', { name: 'sweep' }));
      const keyId = timed.runtime.live.authenticate(account.key)?.keyId ?? '';
      expect(keyId).not.toBe('');
      // A job as a gateway that stopped right after recording its end leaves it: ended, no delivery requested.
      const jobId = `job_${'ab'.repeat(16)}`;
      const context = { now: new Date(now) };
      const events: JobEvent[] = [
        {
          type: 'JobQueued',
          data: {
            jobId,
            accountId: account.account_id,
            subAccountId: null,
            keyId,
            tag: null,
            modality: '3d',
            model: 'meshy/meshy-5',
            provider: 'meshy',
            input: { prompt: 'lost' },
            webhookUrl: hook,
            holdId: 'hold_none',
            requestId: 'req-sweep',
            heldNanos: '0',
          },
        },
        { type: 'JobClaimed', data: { jobId, attempt: 1, leaseUntil: new Date(now + 60_000).toISOString() } },
        { type: 'JobFailed', data: { jobId, error: { message: 'gone', type: 'provider_error', code: 502 } } },
      ];
      await timed.runtime.store.append(
        jobStream(jobId),
        events.map((event) => toNewEvent(event, randomUUID(), context)),
        'no_stream',
      );
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(received).toEqual([]);
      now += 61_000;
      await eventually(
        async () => received.length,
        (n) => n > 0,
        15_000,
      );
      expect(JSON.parse(received[0] ?? '{}')).toMatchObject({
        type: 'job.failed',
        data: { id: jobId, status: 'failed' },
      });
    } finally {
      await timed.close();
      await new Promise((resolve) => receiver.close(resolve));
    }
  });
});

describe('a job across a restart', () => {
  it('is polled to completion by the next gateway and billed once', async () => {
    providers.pendingPolls = 1_000;
    const first = await startTestGateway(env(), { workerIntervalsMs: { jobs: 30 } });
    const schema = first.env.GATEWAY_DB_SCHEMA as string;
    const k = await fundedKey(first);
    const tag = freshTag('restart');
    const accepted = await json(
      await call(
        first,
        k,
        'POST',
        '/videos/generations',
        { prompt: 'a long take', duration: 4 },
        { 'x-gw-tag': tag },
      ),
    );
    await eventually(
      async () => json(await call(first, k, 'GET', `/jobs/${accepted.id}`)),
      (job) => job.status === 'processing' && providers.requests.some((r) => r.path.includes('/operations/')),
      15_000,
    );
    await first.runtime.close();
    providers.pendingPolls = 1;
    const submissions = providers.requests.filter((r) => r.path.endsWith(':predictLongRunning')).length;
    const second = await startTestGateway(env(), { schema, workerIntervalsMs: { jobs: 30 } });
    try {
      const job = await settled(second, k, accepted.id);
      expect(job).toMatchObject({ status: 'completed', attempts: 1 });
      expect(providers.requests.filter((r) => r.path.endsWith(':predictLongRunning')).length).toBe(
        submissions,
      );
      expect((await usageOf(second, k, tag))?.cost_cents).toBe(perUnitCents('0.15', 4));
      expect((await usageOf(second, k, tag))?.requests).toBe(1);
    } finally {
      await second.close();
    }
  });
});
