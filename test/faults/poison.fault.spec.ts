import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../src/db/embedded.ts';
import { runCli } from '../support/cli.ts';
import { eventually } from '../support/gateway.ts';
import { json } from '../support/json.ts';
import { type ServerProcess, spawnServer } from '../support/server-process.ts';
import { startOpenAiUpstream } from '../upstreams/openai.ts';
import type { Upstream } from '../upstreams/types.ts';

const CLEAN_TOP_UPS = 100;
const BATCH_LINES = 24;
/** Text PostgreSQL refuses in jsonb and text, as an upstream may well send it. */
const POISONED_CONTENT = [
  'nul \u0000 inside',
  '\u0000',
  'high \ud800 alone',
  'low \udc00 alone',
  'x\u0000\ud800',
];

const completion = (content: string, i: number) => ({
  id: `chatcmpl-poison-${i}`,
  object: 'chat.completion',
  created: 1_700_000_000,
  model: 'gpt-4o-mini',
  choices: [{ index: 0, message: { role: 'assistant', content }, logprobs: null, finish_reason: 'stop' }],
  usage: { prompt_tokens: 5, completion_tokens: 4, total_tokens: 9 },
});

/** Reads a table straight from the embedded PostgreSQL the gateway manages. */
async function query<Row extends pg.QueryResultRow>(dataDir: string, sql: string, values: unknown[]) {
  const password = (await readFile(join(dataDir, 'pg-password'), 'utf8')).trim();
  const port = Number((await readFile(join(dataDir, 'pg', 'postmaster.pid'), 'utf8')).split('\n')[3]);
  const client = new pg.Client({ host: '127.0.0.1', port, user: 'gateway', password, database: 'postgres' });
  await client.connect();
  try {
    await client.query('SET search_path = gateway');
    return (await client.query<Row>(sql, values)).rows;
  } finally {
    await client.end();
  }
}

describe('poisoned text among clean commands, on a real gateway process', () => {
  let dataDir: string;
  let env: Record<string, string>;
  let server: ServerProcess;
  let openai: Upstream;
  const figures: Record<string, string | number> = {};

  beforeAll(async () => {
    openai = await startOpenAiUpstream();
    dataDir = await mkdtemp(join(tmpdir(), 'gw-poison-'));
    env = {
      GATEWAY_DATA_DIR: dataDir,
      PORT: String(await freePort()),
      DATABASE_URL: '',
      REDIS_URL: '',
      GATEWAY_ADMIN_TOKEN: 'gw-admin-poison-test-token-0123456789',
      OPENAI_API_KEY: 'sk-upstream-openai',
      OPENAI_BASE_URL: `${openai.url}/v1`,
      // Poisoned results are scripted per chat call, so lines run through the gateway's own runner.
      GATEWAY_BATCH_APIS: 'none',
    };
    server = await spawnServer(env);
  });
  afterAll(async () => {
    console.log(
      `FAULTS poison ${Object.entries(figures)
        .map(([k, v]) => `${k}=${v}`)
        .join(' ')}`,
    );
    if (server && server.child.exitCode === null) {
      server.child.kill('SIGTERM');
      await server.exited;
    }
    await openai?.close();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  const admin = (path: string, body: string) =>
    fetch(`${server.url}/admin${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${env.GATEWAY_ADMIN_TOKEN}`, 'content-type': 'application/json' },
      body,
    });
  let accountId: string;
  let key: string;
  const v1 = (path: string, init: RequestInit = {}) =>
    fetch(`${server.url}/v1${path}`, {
      ...init,
      headers: { authorization: `Bearer ${key}`, ...init.headers },
    });

  it('credits every clean top-up beside a poisoned one, which alone is refused with a 4xx', async () => {
    ({ account_id: accountId, key } = await json(await admin('/accounts', '{"name":"Poison"}')));
    // Written by hand, so that the NUL and the surrogate travel as the raw JSON escapes a client sends.
    const topUp = (cents: number, reference: string) =>
      admin(`/accounts/${accountId}/top-ups`, `{"cents":${cents},"reference":"${reference}"}`);
    const responses = await Promise.all([
      ...Array.from({ length: CLEAN_TOP_UPS }, (_, i) => topUp(i + 1, `pay-${i}`)),
      topUp(10_000, 'pay-\\u0000-poisoned'),
      topUp(10_000, 'pay-\\udc00-poisoned'),
    ]);
    const statuses = responses.map((r) => r.status);
    await Promise.all(responses.map((r) => r.body?.cancel()));
    const cleanOk = statuses.slice(0, CLEAN_TOP_UPS).filter((s) => s === 200).length;
    const poisoned = statuses.slice(CLEAN_TOP_UPS);
    const expected = (CLEAN_TOP_UPS * (CLEAN_TOP_UPS + 1)) / 2;
    const balance = await eventually(
      async () => json(await v1('/balance')),
      (b) => b.cents === expected,
      10_000,
    );
    Object.assign(figures, {
      top_ups_clean: CLEAN_TOP_UPS,
      clean_credited: cleanOk,
      poisoned_statuses: poisoned.join('/'),
      balance_cents: balance.cents,
      expected_cents: expected,
    });
    expect(cleanOk).toBe(CLEAN_TOP_UPS);
    for (const status of poisoned) {
      expect(status).toBeGreaterThanOrEqual(400);
      expect(status).toBeLessThan(500);
    }
    expect(balance.cents).toBe(expected);
  });

  it('keeps every batch line, poisoned upstream results included, each charge with its line', async () => {
    POISONED_CONTENT.forEach((content, i) => {
      openai.script({ kind: 'error', status: 200, body: completion(content, i) });
    });
    const lines = Array.from({ length: BATCH_LINES }, (_, i) =>
      JSON.stringify({
        custom_id: `line-${i}`,
        method: 'POST',
        url: '/v1/chat/completions',
        body: {
          model: 'openai/gpt-4o-mini',
          messages: [{ role: 'user', content: `q ${i}` }],
          max_tokens: 20,
        },
      }),
    );
    const form = new FormData();
    form.append('purpose', 'batch');
    form.append('file', new Blob([lines.join('\n')], { type: 'application/jsonl' }), 'input.jsonl');
    const file = await json(await v1('/files', { method: 'POST', body: form }));
    expect(file.id).toMatch(/^file-/);
    const created = await json(
      await v1('/batches', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          input_file_id: file.id,
          endpoint: '/v1/chat/completions',
          completion_window: '24h',
        }),
      }),
    );
    const done = await eventually(
      async () => json(await v1(`/batches/${created.id}`)),
      (b) => ['completed', 'failed', 'expired', 'cancelled'].includes(b.status),
      90_000,
    );
    expect(done.status).toBe('completed');
    const content = async (id: string | null) =>
      id
        ? (await (await v1(`/files/${id}/content`)).text())
            .split('\n')
            .filter((l) => l !== '')
            .map((l) => JSON.parse(l))
        : [];
    const output = await content(done.output_file_id);
    const errors = await content(done.error_file_id);
    const inFiles = new Set([...output, ...errors].map((l) => l.custom_id));
    const charged = await query<{ request_id: string }>(
      dataDir,
      `SELECT DISTINCT request_id FROM charges WHERE kind = 'settled' AND starts_with(request_id, $1)`,
      [`${created.id}-`],
    );
    const answered = new Set(output.map((l) => l.response.request_id));
    const chargedWithLine = charged.filter((c) => answered.has(c.request_id)).length;
    const kept = output
      .map((l) => l.response.body.choices[0].message.content)
      .filter((c: string) => POISONED_CONTENT.includes(c)).length;
    const audit = await runCli(['audit'], env);
    Object.assign(figures, {
      batch_lines: BATCH_LINES,
      in_output: output.length,
      in_errors: errors.length,
      lines_missing: BATCH_LINES - inFiles.size,
      poisoned_results_kept: `${kept}/${POISONED_CONTENT.length}`,
      charged_lines: charged.length,
      charges_without_line: charged.length - chargedWithLine,
      audit: audit.code === 0 ? 'PASS' : `exit-${audit.code}`,
    });
    expect(inFiles.size).toBe(BATCH_LINES);
    expect(kept).toBe(POISONED_CONTENT.length);
    expect(charged.length - chargedWithLine).toBe(0);
    expect(charged.length).toBe(output.length);
    expect(audit.stdout).toContain('Result: PASS');
    expect(audit.code).toBe(0);
  });
});
