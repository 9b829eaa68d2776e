import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reconciliationStream } from '../../events/reconciliation.ts';
import { dollarsToNanos } from '../../src/catalog/index.ts';
import { runCli } from '../support/cli.ts';
import { dropSchema } from '../support/database.ts';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';
import { json } from '../support/json.ts';
import { startAnthropicUpstream } from '../upstreams/anthropic.ts';
import { type CostReportSim, type SimPrice, startCostReports } from '../upstreams/cost-reports.ts';
import { startOpenAiUpstream } from '../upstreams/openai.ts';
import type { Upstream } from '../upstreams/types.ts';
import { adminPost, openAccount, type Receiver, startReceiver, until } from '../webhooks/support.ts';

// Two OpenAI credentials, each in its own project, and Anthropic's single key; each provider's organization reports
// simulated in front of its chat simulator. The gateway's clock runs on a fixed UTC day, the simulators' too.
const DAY = '2026-03-10';
const started = Date.now();
const clock = () => new Date(Date.parse(`${DAY}T10:00:00Z`) + (Date.now() - started));
const schema = `g_${randomBytes(6).toString('hex')}`;
const adminToken = `gw-admin-${randomBytes(16).toString('hex')}`;
const KEYS = { 'team-a': 'sk-team-a', 'team-b': 'sk-team-b' } as const;
const PROJECTS: Record<string, string> = { 'sk-team-a': 'proj_a', 'sk-team-b': 'proj_b' };

let openaiChat: Upstream;
let anthropicChat: Upstream;
let openai: CostReportSim;
let anthropic: CostReportSim;
let operator: Receiver;
let dir: string;
let gateway: TestGateway;
let customerKey: string;
const open: TestGateway[] = [];
const prices: Record<string, SimPrice> = {};

async function start(extra: Record<string, string>) {
  const file = join(dir, 'gateway.json');
  const keys = Object.entries(KEYS).map(([name, key]) => ({ name, key }));
  await writeFile(file, JSON.stringify({ providers: { openai: { base_url: `${openai.url}/v1`, keys } } }));
  const started = await startTestGateway(
    {
      GATEWAY_CONFIG: file,
      GATEWAY_ADMIN_TOKEN: adminToken,
      GATEWAY_ALLOW_PRIVATE_URLS: 'true',
      ANTHROPIC_API_KEY: 'sk-ant-sim',
      ANTHROPIC_BASE_URL: anthropic.url,
      OPENAI_ADMIN_KEY: 'sk-admin-openai',
      OPENAI_RECONCILE_PROJECTS: 'team-a=proj_a,team-b=proj_b',
      ANTHROPIC_ADMIN_KEY: 'sk-ant-admin-sim',
      ...extra,
    },
    { schema, clock, workerIntervalsMs: { webhooks: 20 } },
  );
  open.push(started);
  return started;
}

/** The gateway's own rates of a model (`GET /v1/models/{id}`), in nano-dollars per million tokens. */
async function listedPrice(model: string): Promise<SimPrice> {
  const answer = await fetch(`${gateway.url}/v1/models/${model}`, {
    headers: { authorization: `Bearer ${customerKey}` },
  });
  const { pricing } = await json(answer);
  const nanos = (usd: number) => dollarsToNanos(usd).nanos;
  return {
    input: nanos(pricing.input_per_million_usd),
    cachedInput: nanos(pricing.cached_input_per_million_usd ?? pricing.input_per_million_usd),
    output: nanos(pricing.output_per_million_usd),
  };
}

const chat = (model: string, system?: string, words = 4) =>
  fetch(`${gateway.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${customerKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      model,
      max_tokens: 8,
      cache: 'skip',
      messages: [
        ...(system ? [{ role: 'system', content: system }] : []),
        { role: 'user', content: 'word '.repeat(words).trim() },
      ],
    }),
  });

const cli = (args: string[]) => runCli(['reconcile', ...args], gateway.env);

beforeAll(async () => {
  openaiChat = await startOpenAiUpstream();
  anthropicChat = await startAnthropicUpstream();
  openai = await startCostReports({
    family: 'openai',
    target: openaiChat.url,
    adminKey: 'sk-admin-openai',
    clock,
    prices,
    groupOf: (key) => PROJECTS[key] ?? null,
  });
  anthropic = await startCostReports({
    family: 'anthropic',
    target: anthropicChat.url,
    adminKey: 'sk-ant-admin-sim',
    clock,
    prices,
  });
  operator = await startReceiver();
  dir = await mkdtemp(join(tmpdir(), 'gw-reconcile-'));
  // The operator's account exists before the gateway that names it starts.
  const first = await start({});
  const op = await openAccount(first.url, adminToken);
  const customer = await openAccount(first.url, adminToken);
  customerKey = customer.key;
  await adminPost(first.url, adminToken, `/accounts/${customer.account_id}/top-ups`, {
    cents: 10_000,
    reference: 'funding',
  });
  await adminPost(first.url, adminToken, `/accounts/${op.account_id}/webhook-endpoint`, {
    url: operator.url,
  });
  await first.close();
  open.length = 0;
  gateway = await start({ GATEWAY_OPERATOR_ACCOUNT: op.account_id });
});
afterAll(async () => {
  for (const g of open) await g.close().catch(() => undefined);
  await dropSchema(schema);
  await Promise.all([openaiChat?.close(), anthropicChat?.close(), openai?.close(), anthropic?.close()]);
  await operator?.close();
  await rm(dir, { recursive: true, force: true });
});

interface Row {
  credential: string;
  model: string;
  ledger_nanos: string;
  provider_nanos: string;
  variance_nanos: string;
  variance_percent: number | null;
  flagged: boolean;
}
interface Reconciliation {
  provider: string;
  day: string;
  run: number;
  flagged: boolean;
  rows: Row[];
  appended?: boolean;
}

const listed = async (query: string): Promise<Reconciliation[]> => {
  const answer = await fetch(`${gateway.url}/admin/reconciliation?${query}`, {
    headers: { authorization: `Bearer ${adminToken}` },
  });
  expect(answer.status).toBe(200);
  return (await json(answer)).data;
};
const notices = () =>
  operator.received
    .map((r) => JSON.parse(r.body) as { type: string; data: Record<string, unknown> })
    .filter((n) => n.type === 'reconciliation.variance');

describe('reconciliation against the providers’ cost reports', () => {
  it('matches to the nano-dollar per credential and model when the provider bills the price list', async () => {
    prices['gpt-4o-mini'] = await listedPrice('openai/gpt-4o-mini');
    // Openings of their own (one opening would keep its credential: key affinity), so both keys serve.
    for (let i = 0; i < 8; i++) expect((await chat('openai/gpt-4o-mini', undefined, 4 + i)).status).toBe(200);
    expect(new Set(openai.served.map((s) => s.key))).toEqual(new Set(Object.values(KEYS)));

    const run = await cli(['--day', DAY, '--provider', 'openai']);
    expect(run.code, run.stderr).toBe(0);
    const [reconciled] = (run.json as { data: Reconciliation[] }).data;
    expect(reconciled).toMatchObject({
      provider: 'openai',
      day: DAY,
      run: 1,
      flagged: false,
      appended: true,
    });
    expect(
      reconciled?.rows.map((r) => [r.credential, r.model, r.variance_nanos, r.variance_percent]),
    ).toEqual([
      ['team-a', 'openai/gpt-4o-mini', '0', 0],
      ['team-b', 'openai/gpt-4o-mini', '0', 0],
    ]);
    expect(reconciled?.rows.every((r) => BigInt(r.ledger_nanos) > 0n)).toBe(true);
    // The documented wire format: the admin key as bearer, daily buckets grouped by project and line item.
    const call = openai.calls.find((c) => c.path === '/v1/organization/costs');
    expect(call?.headers.authorization).toBe('Bearer sk-admin-openai');
    expect(call?.query.getAll('group_by')).toEqual(['project_id', 'line_item']);

    // The same figures again: nothing appended, the run stands.
    const again = await cli(['--day', DAY, '--provider', 'openai']);
    expect((again.json as { data: Reconciliation[] }).data[0]).toMatchObject({ run: 1, appended: false });
    const stream = await gateway.runtime.store.readStream(reconciliationStream('openai', DAY));
    expect(stream).toHaveLength(1);
    const shown = await until(
      () => listed(`day=${DAY}&provider=openai`),
      (rows) => rows.length === 1,
    );
    expect(shown[0]?.rows).toHaveLength(2);
    expect(notices()).toEqual([]);
  });

  it('finds a planted 3% drift, flags it above the 2% threshold and tells the operator', async () => {
    openai.drift(3);
    const answer = await adminPost(gateway.url, adminToken, '/reconciliation', {
      day: DAY,
      provider: 'openai',
    });
    expect(answer.status).toBe(200);
    const [reconciled] = answer.body.data as Reconciliation[];
    expect(reconciled).toMatchObject({ run: 2, flagged: true, appended: true });
    for (const row of reconciled?.rows ?? []) {
      expect(row.flagged).toBe(true);
      expect(row.variance_percent).toBeGreaterThanOrEqual(2.99);
      expect(row.variance_percent).toBeLessThanOrEqual(3.01);
      expect(BigInt(row.provider_nanos) - BigInt(row.ledger_nanos)).toBe(BigInt(row.variance_nanos));
    }
    const [notice] = await until(notices, (found) => found.length > 0);
    expect(notice?.data).toMatchObject({ provider: 'openai', day: DAY, run: 2, threshold_percent: 2 });
    expect(notice?.data.rows).toHaveLength(2);
    // The read model shows the latest run only.
    const [shown] = await until(
      () => listed(`day=${DAY}&provider=openai`),
      ([latest]) => latest?.run === 2,
    );
    expect(shown?.flagged).toBe(true);
    openai.drift(0);
  });

  it('flags a provider that bills cached tokens and a long-context tier differently from the price list', async () => {
    const listedRates = await listedPrice('anthropic/claude-sonnet-4-5');
    // Cache reads at the full input rate, and prompts past 40 tokens at twice the rates (not the gateway's tier).
    prices['claude-sonnet-4-5'] = {
      ...listedRates,
      cachedInput: listedRates.input,
      longContext: {
        above: 40,
        input: listedRates.input * 2n,
        cachedInput: listedRates.input * 2n,
        output: listedRates.output * 2n,
      },
    };
    const model = 'anthropic/claude-sonnet-4-5';
    expect((await chat(model, 'you are cached and kind to everyone you meet')).status).toBe(200);
    expect((await chat(model, undefined, 60)).status).toBe(200);
    expect(anthropic.served.some((s) => s.cached > 0)).toBe(true);
    expect(anthropic.served.some((s) => s.long)).toBe(true);

    const run = await cli(['--day', DAY, '--provider', 'anthropic']);
    expect(run.code, run.stderr).toBe(0);
    const [reconciled] = (run.json as { data: Reconciliation[] }).data;
    expect(reconciled).toMatchObject({ provider: 'anthropic', flagged: true });
    const [row] = reconciled?.rows ?? [];
    expect(row).toMatchObject({ credential: '*', model, flagged: true });
    expect(BigInt(row?.variance_nanos ?? '0')).toBeGreaterThan(0n);
    const call = anthropic.calls.find((c) => c.path === '/v1/organizations/cost_report');
    expect(call?.headers['x-api-key']).toBe('sk-ant-admin-sim');
    expect(call?.query.getAll('group_by[]')).toEqual(['workspace_id', 'description']);
    await until(notices, (found) => found.some((n) => n.data.provider === 'anthropic'));
  });

  it('passes the audit: events in their streams, the read models rebuilt equal to the live ones', async () => {
    const audit = await runCli(['audit'], gateway.env);
    expect(audit.stdout).toMatch(/^PASS +schemas /m);
    expect(audit.stdout).not.toMatch(/^FAIL/m);
    expect(audit.code, audit.stdout).toBe(0);
  });

  it('refuses a bad day or a provider without an admin key, naming the field', async () => {
    const bad = await adminPost(gateway.url, adminToken, '/reconciliation', { day: '2026-13-01' });
    expect(bad.status).toBe(400);
    const gemini = await adminPost(gateway.url, adminToken, '/reconciliation', {
      day: DAY,
      provider: 'google',
    });
    expect(gemini.status).toBe(400);
    expect((gemini.body.error as { message: string }).message).toMatch(/^'provider'/);
    // A wrong admin key: the provider's 401 reads as the upstream's failure, naming the report.
    const wrong = await startTestGateway(
      { ...gateway.env, GATEWAY_URL: '', PORT: '0', OPENAI_ADMIN_KEY: 'sk-admin-wrong' },
      { schema, clock },
    );
    open.push(wrong);
    const refused = await adminPost(wrong.url, adminToken, '/reconciliation', {
      day: DAY,
      provider: 'openai',
    });
    expect(refused.status).toBe(502);
    expect((refused.body.error as { message: string }).message).toMatch(
      /openai's cost report failed \(401\)/,
    );
    const usage = await cli([]);
    expect(usage.code).toBe(2);
  });
});
