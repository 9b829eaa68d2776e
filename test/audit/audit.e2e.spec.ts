import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { budgetStream, monthOf } from '../../events/budget.ts';
import { runCli } from '../support/cli.ts';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';
import { json } from '../support/json.ts';

const NANOS_PER_CENT = 10_000_000n;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function v1(
  gateway: TestGateway,
  path: string,
  key: string,
  body: unknown,
  headers: Record<string, string> = {},
) {
  return fetch(`${gateway.url}/v1${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
}

async function chat(
  gateway: TestGateway,
  key: string,
  content: string,
  headers: Record<string, string> = {},
) {
  const response = await v1(
    gateway,
    '/chat/completions',
    key,
    { model: 'local/echo', messages: [{ role: 'user', content }], max_tokens: 50 },
    headers,
  );
  expect(response.status).toBe(200);
  await response.body?.cancel();
}

async function openAccount(gateway: TestGateway, name: string): Promise<{ accountId: string; key: string }> {
  const { account_id: accountId, key } = await json(await gateway.admin('/accounts', { name }));
  return { accountId, key };
}

const topUp = (gateway: TestGateway, accountId: string, cents: number, reference: string) =>
  gateway.admin(`/accounts/${accountId}/top-ups`, { cents, reference });

/** Parses the export's CSV, which these tests keep free of quoted fields. */
function parseCsv(text: string): Record<string, string>[] {
  const [header, ...rows] = text.split('\r\n').filter((line) => line !== '');
  const columns = (header as string).split(',');
  return rows.map((row) => Object.fromEntries(row.split(',').map((value, i) => [columns[i], value])));
}

describe('the auditor’s tools on an honest log, then a tampered one', () => {
  let gateway: TestGateway;
  let accountId: string;
  let bystanderId: string;
  let subAccountId: string;
  let beforeSecondTopUp: string;
  const chats = { main: 3, tagged: 2, sub: 2 };

  beforeAll(async () => {
    gateway = await startTestGateway();
    const account = await openAccount(gateway, 'Audited');
    accountId = account.accountId;
    await topUp(gateway, accountId, 500, 'pay_1');
    for (let i = 0; i < chats.main; i++) await chat(gateway, account.key, `hello ${i}`);
    expect((await v1(gateway, '/budgets', account.key, { tag: 'campaign', cap_cents: 100 })).status).toBe(
      200,
    );
    for (let i = 0; i < chats.tagged; i++)
      await chat(gateway, account.key, `tagged ${i}`, { 'x-gw-tag': 'campaign' });
    const sub = await json(
      await v1(gateway, '/sub-accounts', account.key, { name: 'Customer', spend_cap_cents: 50 }),
    );
    subAccountId = sub.id;
    for (let i = 0; i < chats.sub; i++) await chat(gateway, sub.key, `from the customer ${i}`);
    await sleep(20);
    beforeSecondTopUp = new Date().toISOString();
    await sleep(20);
    await topUp(gateway, accountId, 250, 'pay_2');
    bystanderId = (await openAccount(gateway, 'Bystander')).accountId;
    await topUp(gateway, bystanderId, 100, 'pay_1');
  });
  afterAll(async () => {
    await gateway?.close();
  });

  it('passes every check on an honest log, for all accounts and for one', async () => {
    const all = await runCli(['audit'], gateway.env);
    // The CLI names where it works on stderr; stdout is the report alone.
    expect(all.stderr).toMatch(/^store at PostgreSQL postgres:\/\/[^\n]*\n$/);
    expect(all.code).toBe(0);
    for (const check of ['revisions', 'schemas', 'hash chains', 'read models', 'holds', 'caps', 'balances'])
      expect(all.stdout).toMatch(new RegExp(`^PASS +${check} `, 'm'));
    expect(all.stdout).toMatch(/^PASS +holds +7 holds: 7 settled, 0 released, 0 open$/m);
    expect(all.stdout).toContain('Result: PASS');

    const one = await runCli(['audit', '--account', accountId], gateway.env);
    expect(one.code).toBe(0);
    expect(one.stdout).toContain(`(account ${accountId})`);
    expect(one.stdout).toMatch(/^PASS +balances +1 balances rows checked/m);
    const nobody = await runCli(['audit', '--account', 'acct_nobody'], gateway.env);
    expect(nobody.code).toBe(1);
    expect(nobody.json).toMatchObject({ error: { type: 'not_found_error' } });
  });

  it('gives the balance as it stood before and after a top-up', async () => {
    const before = await runCli(['balance', '--account', accountId, '--at', beforeSecondTopUp], gateway.env);
    expect(before.code).toBe(0);
    const now = await runCli(
      ['balance', '--account', accountId, '--at', new Date().toISOString()],
      gateway.env,
    );
    const earlier = before.json as Record<string, string | number>;
    const later = now.json as Record<string, string | number>;
    expect(earlier).toMatchObject({
      account_id: accountId,
      at: beforeSecondTopUp,
      topped_up_nanos: '5000000000',
    });
    expect(later).toMatchObject({ topped_up_nanos: '7500000000', charged_nanos: earlier.charged_nanos });
    const charged = BigInt(earlier.charged_nanos as string);
    expect(charged).toBeGreaterThan(0n);
    expect(BigInt(later.nanos as string) - BigInt(earlier.nanos as string)).toBe(250n * NANOS_PER_CENT);
    expect(earlier.cents).toBe(Number((5_000_000_000n - charged) / NANOS_PER_CENT));

    const opening = await runCli(
      ['balance', '--account', accountId, '--at', '2000-01-01T00:00:00Z'],
      gateway.env,
    );
    expect(opening.json).toMatchObject({ cents: 0, usd: 0, nanos: '0' });
    const bad = await runCli(['balance', '--account', accountId, '--at', 'yesterday'], gateway.env);
    expect(bad.code).toBe(2);
  });

  it('exports the month’s charges line by line, adding up to what was charged', async () => {
    const month = monthOf(new Date());
    const exported = await runCli(
      ['export', '--account', accountId, '--month', month, '--format', 'csv'],
      gateway.env,
    );
    expect(exported.code).toBe(0);
    expect(exported.stdout.split('\r\n')[0]).toBe(
      'occurred_at,request_id,hold_id,kind,sub_account_id,tag,model,provider,input_tokens,output_tokens,' +
        'pass_through_nanos,fee_nanos,discount,charged_nanos,charged_usd,usage_reported,' +
        'adjustment_nanos,adjustment_usd,reference,reason,reverses',
    );
    const rows = parseCsv(exported.stdout);
    expect(rows).toHaveLength(chats.main + chats.tagged + chats.sub);
    expect(rows.filter((r) => r.tag === 'campaign')).toHaveLength(chats.tagged);
    expect(rows.filter((r) => r.sub_account_id === subAccountId)).toHaveLength(chats.sub);
    for (const row of rows) {
      expect(row).toMatchObject({
        kind: 'settled',
        model: 'local/echo',
        provider: 'local',
        usage_reported: 'true',
      });
      expect(row.occurred_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
      expect(Number(row.input_tokens)).toBeGreaterThan(0);
      expect(Number(row.output_tokens)).toBeGreaterThan(0);
      const nanos = BigInt(row.charged_nanos as string);
      expect(row.charged_usd).toBe(
        `${nanos / 1_000_000_000n}.${(nanos % 1_000_000_000n).toString().padStart(9, '0')}`,
      );
      expect(BigInt(row.pass_through_nanos as string) + BigInt(row.fee_nanos as string)).toBe(nanos);
    }
    const total = rows.reduce((sum, r) => sum + BigInt(r.charged_nanos as string), 0n);
    const balance = await runCli(
      ['balance', '--account', accountId, '--at', new Date().toISOString()],
      gateway.env,
    );
    expect((balance.json as { charged_nanos: string }).charged_nanos).toBe(total.toString());

    const empty = await runCli(['export', '--account', accountId, '--month', '2000-01'], gateway.env);
    expect(empty.stdout.split('\r\n').filter(Boolean)).toHaveLength(1);
    const json = await runCli(
      ['export', '--account', accountId, '--month', month, '--format', 'json'],
      gateway.env,
    );
    expect(json.code).toBe(2);
    expect(json.stderr).toContain('only csv');
    expect((await runCli(['export', '--account', accountId, '--month', '2026-13'], gateway.env)).code).toBe(
      2,
    );
  });

  it('fails on an edited event row, naming the hash chain of its stream, and passes once it is restored', async () => {
    const pool = gateway.runtime.database.pool;
    const stream = `account-${accountId}`;
    const { rows } = await pool.query<{ position: string; revision: string; data: unknown }>(
      `SELECT position, revision, data FROM events WHERE stream = $1 AND type = 'AccountToppedUp' ORDER BY revision LIMIT 1`,
      [stream],
    );
    const target = rows[0] as { position: string; revision: string; data: unknown };
    await pool.query(
      `UPDATE events SET data = jsonb_set(data, '{amountNanos}', '"900000000000"') WHERE position = $1`,
      [target.position],
    );
    try {
      const audit = await runCli(['audit'], gateway.env);
      expect(audit.code).toBe(3);
      expect(audit.stdout).toMatch(/^FAIL +hash chains +\d+ of \d+ streams intact/m);
      expect(audit.stdout).toContain(`hash chains: ${stream}@${target.revision}: content hash mismatch`);
      expect(audit.stdout).toMatch(/^FAIL +balances /m);
      expect(audit.stdout).toContain('Result: FAIL');
      // Another account's audit looks only at its own streams and rows.
      expect((await runCli(['audit', '--account', bystanderId], gateway.env)).code).toBe(0);
    } finally {
      await pool.query('UPDATE events SET data = $2 WHERE position = $1', [target.position, target.data]);
    }
    expect((await runCli(['audit'], gateway.env)).code).toBe(0);
  });
});

describe('the audit on a log with a deleted event row', () => {
  let gateway: TestGateway;
  afterAll(async () => {
    await gateway?.close();
  });

  it('fails, naming the missing revision and the broken chain', async () => {
    gateway = await startTestGateway();
    const { accountId, key } = await openAccount(gateway, 'Deleted from');
    await topUp(gateway, accountId, 100, 'pay_1');
    for (let i = 0; i < 3; i++) await chat(gateway, key, `hello ${i}`);
    const stream = budgetStream(accountId, monthOf(new Date()));
    expect((await runCli(['audit', '--account', accountId], gateway.env)).code).toBe(0);

    // The second request's reservation: its settlement is left without one.
    const { rows } = await gateway.runtime.database.pool.query<{ revision: string }>(
      `DELETE FROM events WHERE position = (
         SELECT position FROM events WHERE stream = $1 AND type = 'SpendReserved' ORDER BY revision OFFSET 1 LIMIT 1
       ) RETURNING revision`,
      [stream],
    );
    const revision = Number(rows[0]?.revision);
    const audit = await runCli(['audit'], gateway.env);
    expect(audit.code).toBe(3);
    expect(audit.stdout).toMatch(/^FAIL +revisions /m);
    expect(audit.stdout).toContain(
      `revisions: ${stream}: revision ${revision} missing (the stream goes on at ${revision + 1})`,
    );
    expect(audit.stdout).toMatch(/^FAIL +hash chains /m);
    expect(audit.stdout).toContain(`hash chains: ${stream}@${revision + 1}: previous hash does not match`);
    expect(audit.stdout).toMatch(/^FAIL +holds .*\n[\s\S]*is settled but was never reserved/m);
    expect(audit.stdout).toMatch(/^FAIL +read models /m);
    expect(audit.stdout).toContain('holds: 1 rows differ from a rebuild from zero');
  });
});
