import { randomBytes } from 'node:crypto';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { chat, say } from '../support/chat.ts';
import { dropSchema } from '../support/database.ts';
import { eventually, startTestGateway, type TestGateway } from '../support/gateway.ts';
import { json } from '../support/json.ts';
import { spawnServer } from '../support/server-process.ts';
import { type RecordedSpan, recordSpans } from '../support/tracing.ts';
import { startOpenAiUpstream } from '../upstreams/openai.ts';
import type { Upstream } from '../upstreams/types.ts';

let upstream: Upstream;
let gateway: TestGateway;
let key: string;
let recorder: ReturnType<typeof recordSpans>;

beforeAll(async () => {
  recorder = recordSpans();
  upstream = await startOpenAiUpstream();
  gateway = await startTestGateway({ OPENAI_API_KEY: 'sk-upstream', OPENAI_BASE_URL: `${upstream.url}/v1` });
  const account = await json(await gateway.admin('/accounts', { name: 'ops' }));
  key = account.key;
  await gateway.admin(`/accounts/${account.account_id}/top-ups`, { cents: 1000, reference: 'ops' });
});
afterAll(async () => {
  recorder?.stop();
  await gateway?.close();
  await upstream?.close();
});

const admin = () => ({ authorization: `Bearer ${gateway.adminToken}` });

describe('health and readiness', () => {
  it('answers /healthz and /readyz without credentials', async () => {
    const health = await fetch(`${gateway.url}/healthz`);
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({ status: 'ok' });
    const ready = await eventually(
      () => fetch(`${gateway.url}/readyz`),
      (r) => r.status === 200,
      5000,
    );
    expect(await ready.json()).toEqual({
      status: 'ready',
      checks: { database: 'ok', event_store: 'ok', read_models: 'ok', redis: 'not configured' },
    });
  });

  it('is not ready, naming the read models, when they fall behind the log', async () => {
    const other = await startTestGateway();
    try {
      await other.runtime.runner.stop();
      // Events the stopped read models will not fold: copies of the smallest one in streams of their own.
      await other.runtime.database.pool.query(
        `INSERT INTO events (id, stream, revision, type, data, metadata, occurred_at, prev_hash, hash)
         SELECT gen_random_uuid(), 'noise-' || n, 0, e.type, e.data, e.metadata, e.occurred_at, e.prev_hash, e.hash
           FROM generate_series(1, 1200) AS n, (SELECT * FROM events ORDER BY octet_length(data::text) LIMIT 1) AS e`,
      );
      type Readiness = { checks: Record<string, string>; error: { message: string } };
      const readiness = async () => {
        const response = await fetch(`${other.url}/readyz`);
        return { status: response.status, body: (await response.json()) as Readiness };
      };
      // Each check gives up after 2 s; on a loaded machine the first answer may be that instead.
      const { status, body } = await eventually(
        readiness,
        (r) => r.body.checks.read_models?.startsWith('failing: behind') === true,
        10_000,
      );
      expect(status).toBe(503);
      expect(body.checks.read_models).toMatch(
        /^failing: behind the log by more than 1000 events: .*balances/,
      );
      expect(body.checks.database).toBe('ok');
      expect(body.error).toMatchObject({ type: 'api_error', code: 503 });
      expect(body.error.message).toContain('read_models');
    } finally {
      await other.close();
    }
  }, 60_000);

  it('is not ready, naming Redis, when the configured Redis does not answer', async () => {
    const other = await startTestGateway({ REDIS_URL: 'redis://127.0.0.1:9' });
    try {
      const response = await fetch(`${other.url}/readyz`);
      expect(response.status).toBe(503);
      const body = (await response.json()) as { checks: Record<string, string> };
      expect(body.checks.redis).toMatch(/^failing/);
      expect(body.checks.database).toBe('ok');
    } finally {
      await other.close();
    }
  });
});

describe('metrics', () => {
  it('are behind the admin token', async () => {
    expect((await fetch(`${gateway.url}/metrics`)).status).toBe(401);
    const withKey = await fetch(`${gateway.url}/metrics`, { headers: { authorization: `Bearer ${key}` } });
    expect(withKey.status).toBe(403);
  });

  it('count requests, latency per route, model and provider, upstream calls, cache lookups and the store', async () => {
    expect((await chat(gateway.url, key, { model: 'openai/gpt-4o-mini', ...say('hi') })).status).toBe(200);
    expect((await chat(gateway.url, key, { ...say('cached'), temperature: 0 })).status).toBe(200);
    const response = await fetch(`${gateway.url}/metrics`, { headers: admin() });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain('text/plain');
    const text = await response.text();
    const value = (pattern: RegExp) => Number(pattern.exec(text)?.[1]);
    expect(
      value(
        /gateway_http_requests_total\{method="POST",route="\/v1\/chat\/completions",status="200"\} (\d+)/,
      ),
    ).toBe(2);
    expect(
      value(
        /gateway_http_request_duration_seconds_count\{route="\/v1\/chat\/completions",model="openai\/gpt-4o-mini",provider="openai"\} (\d+)/,
      ),
    ).toBe(1);
    expect(
      value(/gateway_upstream_duration_seconds_count\{host="127\.0\.0\.1:\d+",status="200"\} (\d+)/),
    ).toBeGreaterThan(0);
    expect(text).toMatch(/gateway_cache_lookups_total\{result="\w+"\} \d+/);
    expect(
      value(/gateway_charged_nanodollars_total\{model="openai\/gpt-4o-mini",provider="openai"\} (\d+)/),
    ).toBeGreaterThan(0);
    expect(text).toMatch(/gateway_holds_open \d+/);
    expect(text).toMatch(/gateway_charged_usd [\d.e-]+/);
    expect(text).toMatch(/gateway_projection_lag_events\{projection="balances"\} \d+/);
    expect(text).toMatch(/gateway_webhook_queue \d+/);
    expect(text).toMatch(/gateway_process_resident_memory_bytes \d+/);
    const scrape = async () => (await fetch(`${gateway.url}/metrics`, { headers: admin() })).text();
    const charges = await eventually(
      async () => Number(/gateway_charges (\d+)/.exec(await scrape())?.[1]),
      (n) => n >= 2,
      3000,
    );
    expect(charges).toBeGreaterThanOrEqual(2);
  });
});

describe('traces', () => {
  it('has a span per request and a child span per upstream call', async () => {
    const response = await chat(gateway.url, key, { model: 'openai/gpt-4o-mini', ...say('traced') });
    expect(response.status).toBe(200);
    const requestId = response.headers.get('x-request-id');
    const server = await eventually(
      async () => recorder.spans.find((s) => s.attributes['gateway.request_id'] === requestId),
      (s) => s !== undefined,
    );
    expect(server).toMatchObject({
      name: 'POST /v1/chat/completions',
      attributes: {
        'http.route': '/v1/chat/completions',
        'http.response.status_code': 200,
        'gateway.model': 'openai/gpt-4o-mini',
        'gateway.provider': 'openai',
        'gateway.account_id': expect.stringMatching(/^acct_/),
      },
    });
    const children = recorder.spans.filter((s: RecordedSpan) => s.parentSpanId === server?.spanId);
    expect(children).toEqual([
      expect.objectContaining({
        name: expect.stringMatching(/^POST 127\.0\.0\.1:\d+$/),
        traceId: server?.traceId,
        attributes: expect.objectContaining({
          'url.path': '/v1/chat/completions',
          'http.response.status_code': 200,
        }),
      }),
    ]);
  });
});

describe('request log lines', () => {
  it('writes one line per request with its id, account, model, status and cost', async () => {
    const schema = `ops_${randomBytes(5).toString('hex')}`;
    const server = await spawnServer({
      DATABASE_URL: inject('databaseUrl'),
      GATEWAY_DB_SCHEMA: schema,
      GATEWAY_DATA_DIR: await mkdtemp(join(tmpdir(), 'gw-ops-')),
      GATEWAY_ADMIN_TOKEN: gateway.adminToken,
      PORT: '0',
      LOG_LEVEL: 'info',
    });
    try {
      const account = await json(
        await fetch(`${server.url}/admin/accounts`, {
          method: 'POST',
          headers: { ...admin(), 'content-type': 'application/json' },
          body: JSON.stringify({ name: 'logged' }),
        }),
      );
      await fetch(`${server.url}/admin/accounts/${account.account_id}/top-ups`, {
        method: 'POST',
        headers: { ...admin(), 'content-type': 'application/json' },
        body: JSON.stringify({ cents: 100, reference: 'log' }),
      });
      const answered = await eventually(
        () => chat(server.url, account.key, say('log me'), { 'x-request-id': 'req-log-line-1' }),
        (r) => r.status === 200,
        3000,
      );
      expect(answered.status).toBe(200);
      const line = await eventually(
        async () =>
          server.stdout
            .filter((l) => l.startsWith('{'))
            .map((l) => JSON.parse(l) as Record<string, unknown>)
            .find((l) => l.client_request_id === 'req-log-line-1'),
        (l) => l !== undefined,
        3000,
      );
      expect(line).toMatchObject({
        msg: 'request',
        // The gateway's own id, the request's in the request log; the client's is beside it.
        reqId: answered.headers.get('x-gw-request-id'),
        status: 200,
        account: account.account_id,
        model: 'local/echo',
        provider: 'local',
        cost_usd: expect.any(Number),
      });
      expect(line?.cost_usd as number).toBeGreaterThan(0);
      const perRequest = server.stdout.filter((l) => l.includes('"req-log-line-1"'));
      expect(perRequest).toHaveLength(1);
    } finally {
      server.signal('SIGTERM');
      await server.exited;
      await dropSchema(schema);
    }
  });
});
