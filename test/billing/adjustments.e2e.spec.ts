import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { budgetStream, monthOf, nextMonth } from '../../events/budget.ts';
import { chat, say } from '../support/chat.ts';
import { runCli } from '../support/cli.ts';
import { eventually, startTestGateway, type TestGateway } from '../support/gateway.ts';
import { type Json, json } from '../support/json.ts';

// The operator's credits and debits: decided in the budget stream, so that what requests may spend changes at once
// on every instance and a debit never takes money an open hold was granted.

// Real time, until the last tests move the gateways into the next month (the CLI's direct mode keeps real time).
let offsetMs = 0;
const clock = () => new Date(Date.now() + offsetMs);
const month = monthOf(new Date());
const next = nextMonth(month);
let gateway: TestGateway;
let second: TestGateway;
let accountId: string;
let key: string;

const adjust = (account: string, body: Record<string, unknown>) =>
  gateway.admin(`/accounts/${account}/adjustments`, body);
const balance = async (account: string) =>
  json(
    await fetch(`${gateway.url}/admin/accounts/${account}/balance`, {
      headers: { authorization: `Bearer ${gateway.adminToken}` },
    }),
  );
/** A request holding a few thousand nano-dollars at most. */
const small = { max_tokens: 20, ...say('hello') };

beforeAll(async () => {
  gateway = await startTestGateway({}, { clock });
  second = await startTestGateway({}, { clock, schema: gateway.env.GATEWAY_DB_SCHEMA as string });
  const account = await json(await gateway.admin('/accounts', { name: 'adjusted' }));
  ({ account_id: accountId, key } = account);
  await gateway.admin(`/accounts/${accountId}/top-ups`, { cents: 100, reference: 'pay-1' });
});
afterAll(async () => {
  await second?.close();
  await gateway?.close();
});

describe('POST /admin/accounts/{id}/adjustments', () => {
  it('debits and credits what requests can spend at once, with the reason recorded as an event', async () => {
    expect((await chat(gateway.url, key, small)).status).toBe(200);
    const debit = await adjust(accountId, { cents: -99, reason: 'chargeback', reference: 'debit-1' });
    expect(debit.status).toBe(200);
    expect(await json(debit)).toEqual({
      object: 'adjustment',
      account_id: accountId,
      reference: 'debit-1',
      cents: -99,
      reason: 'chargeback',
      reverses: null,
      applied: true,
    });
    // Less than a cent is left: a request whose worst case is a cent is refused, with no wait for any projection.
    const refused = await chat(gateway.url, key, say('hello'));
    expect(refused.status).toBe(402);
    expect(refused.body.error.type).toBe('insufficient_balance');

    const credit = await adjust(accountId, { cents: 50, reason: 'goodwill', reference: 'credit-1' });
    expect(await json(credit)).toMatchObject({ cents: 50, applied: true });
    expect((await chat(gateway.url, key, say('hello'))).status).toBe(200);

    const stream = await gateway.runtime.store.readStream(budgetStream(accountId, month));
    const adjusted = stream.filter((e) => e.type === 'BalanceAdjusted').map((e) => e.data);
    expect(adjusted).toEqual([
      expect.objectContaining({ reference: 'debit-1', amountNanos: '-990000000', reason: 'chargeback' }),
      expect.objectContaining({ reference: 'credit-1', amountNanos: '500000000', reason: 'goodwill' }),
    ]);
    const shown = await eventually(
      () => balance(accountId),
      (b: Json) => b.adjusted_cents === -49,
      3000,
    );
    expect(shown).toMatchObject({ topped_up_cents: 100, adjusted_cents: -49 });
    const v1 = await json(
      await fetch(`${gateway.url}/v1/balance`, { headers: { authorization: `Bearer ${key}` } }),
    );
    expect(v1.cents).toBe(Math.floor(100 - 49 - shown.charged_cents));
  });

  it('shows the adjustments with the top-ups on the dashboard’s billing page', async () => {
    const form = await fetch(`${gateway.url}/dashboard/sign-in`);
    const nonce = (form.headers.get('set-cookie') ?? '').split(';')[0] as string;
    const token = /name="_token" value="([^"]+)"/.exec(await form.text())?.[1] ?? '';
    const signedIn = await fetch(`${gateway.url}/dashboard/sign-in`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: nonce, accept: 'text/html' },
      body: new URLSearchParams({ _token: token, key }).toString(),
    });
    const cookie = (signedIn.headers.getSetCookie().find((c) => c.startsWith('gw_session=')) ?? '').split(
      ';',
    )[0];
    const page = await (
      await fetch(`${gateway.url}/dashboard/billing`, { headers: { cookie: cookie as string } })
    ).text();
    const table = page.slice(page.indexOf('id="top-ups"'));
    expect(table).toMatch(/<td>adjustment<\/td><td><code>debit-1<\/code><\/td>/);
    expect(table).toMatch(/<td>top-up<\/td><td><code>pay-1<\/code><\/td>/);
    expect(page).toContain('id="adjusted"');
  });

  it('answers a repeated reference with the first adjustment, and refuses it with another amount', async () => {
    const again = await adjust(accountId, { cents: 50, reason: 'typed again', reference: 'credit-1' });
    expect(again.status).toBe(200);
    expect(await json(again)).toMatchObject({ cents: 50, reason: 'goodwill', applied: false });
    const other = await adjust(accountId, { cents: 60, reason: 'goodwill', reference: 'credit-1' });
    expect(other.status).toBe(409);
    expect((await json(other)).error).toMatchObject({ type: 'conflict_error', param: 'reference' });
    const zero = await adjust(accountId, { cents: 0, reason: 'nothing', reference: 'zero' });
    expect(zero.status).toBe(400);
    expect((await json(zero)).error.param).toBe('cents');
    const noReason = await adjust(accountId, { cents: 1, reason: '  ', reference: 'blank' });
    expect((await json(noReason)).error.param).toBe('reason');
    expect((await adjust('acct_nobody', { cents: 1, reason: 'x', reference: 'y' })).status).toBe(404);
  });

  it('reverses a top-up by naming it: at most its amount, and once', async () => {
    await gateway.admin(`/accounts/${accountId}/top-ups`, { cents: 30, reference: 'pay-2' });
    const reversal = (cents: number, reference: string, reverses = 'pay-2') =>
      adjust(accountId, { cents, reason: 'mistaken top-up', reference, reverses });
    const unknown = await reversal(-1, 'rev-0', 'pay-nope');
    expect(unknown.status).toBe(404);
    expect((await json(unknown)).error.param).toBe('reverses');
    expect((await json(await reversal(30, 'rev-0'))).error).toMatchObject({ param: 'cents', code: 400 });
    const tooMuch = await json(await reversal(-31, 'rev-0'));
    expect(tooMuch.error.message).toContain('at most $0.30');
    expect(await json(await reversal(-30, 'rev-1'))).toMatchObject({ reverses: 'pay-2', applied: true });
    const twice = await reversal(-1, 'rev-2');
    expect(twice.status).toBe(409);
    expect((await json(twice)).error.param).toBe('reverses');
  });

  it('refuses a debit that would take the balance below what a request holds, naming it', async () => {
    const auth = gateway.runtime.live.authenticate(key);
    const hold = await gateway.runtime.spending.reserve(auth as NonNullable<typeof auth>, {
      requestId: 'in-flight',
      tag: null,
      minNanos: 400_000_000n,
      maxNanos: 400_000_000n,
      ttlMs: 60_000,
    });
    const refused = await adjust(accountId, { cents: -20, reason: 'too much', reference: 'held-1' });
    expect(refused.status).toBe(409);
    const { error } = await json(refused);
    expect(error).toMatchObject({ type: 'conflict_error', param: 'cents' });
    expect(error.message).toContain('below the $0.40 held by requests in progress');
    expect((await adjust(accountId, { cents: -9, reason: '=fits', reference: 'held-2' })).status).toBe(200);
    await gateway.runtime.spending.release(hold, 'cancelled');
    const belowZero = await json(await adjust(accountId, { cents: -42, reason: 'all', reference: 'held-3' }));
    expect(belowZero.error.message).toContain('below zero');
  });

  it('changes what another instance can spend at once', async () => {
    const other = await json(await gateway.admin('/accounts', { name: 'two instances' }));
    await gateway.admin(`/accounts/${other.account_id}/top-ups`, { cents: 10, reference: 'p' });
    // A request that holds about a cent for its output limit, served by the second instance.
    const cent = say('hello');
    expect(
      (
        await eventually(
          () => chat(second.url, other.key, cent),
          (r) => r.status === 200,
          5000,
        )
      ).status,
    ).toBe(200);
    await adjust(other.account_id, { cents: -9, reason: 'leaves under a cent', reference: 'd' });
    expect((await chat(second.url, other.key, cent)).status).toBe(402);
    await adjust(other.account_id, { cents: 5, reason: 'back', reference: 'c' });
    expect((await chat(second.url, other.key, cent)).status).toBe(200);
  });
});

describe('gateway adjust', () => {
  it('adjusts through the running gateway and on the store directly, once per reference', async () => {
    const viaGateway = await runCli(
      ['adjust', '--account', accountId, '--cents=-1', '--reason', 'cli debit', '--reference', 'cli-1'],
      gateway.env,
    );
    expect(viaGateway.code, viaGateway.stderr).toBe(0);
    expect(viaGateway.stderr).toContain('gateway at');
    expect(viaGateway.json).toMatchObject({ cents: -1, reason: 'cli debit', applied: true });
    const direct = await runCli(
      ['adjust', '--account', accountId, '--cents', '2', '--reason', 'cli credit', '--reference', 'cli-2'],
      { ...gateway.env, GATEWAY_URL: 'http://127.0.0.1:9' },
    );
    expect(direct.code, direct.stderr).toBe(0);
    expect(direct.stderr).toContain('store at');
    expect(direct.json).toMatchObject({ cents: 2, applied: true });
    // The gateway decides its next request on the stream the CLI appended to.
    const adjusted = await eventually(
      () => balance(accountId),
      (b: Json) => b.adjusted_cents === -49 - 30 - 9 - 1 + 2,
      3000,
    );
    expect(adjusted.adjusted_cents).toBe(-87);
  });
});

describe('adjustments in later months, the audit and the export', () => {
  it('counts a reference and a reversal once across months', async () => {
    offsetMs = Date.parse(`${next}-02T08:00:00Z`) - Date.now();
    const again = await adjust(accountId, { cents: 50, reason: 'goodwill', reference: 'credit-1' });
    expect(await json(again)).toMatchObject({ applied: false });
    const reversal = await adjust(accountId, {
      cents: -1,
      reason: 'again',
      reference: 'rev-9',
      reverses: 'pay-2',
    });
    expect(reversal.status).toBe(409);
    expect((await chat(gateway.url, key, small)).status).toBe(200);
  });

  it('passes the audit, whose balances check counts the adjustments', async () => {
    const audit = await runCli(['audit'], gateway.env);
    expect(audit.code, audit.stdout).toBe(0);
    expect(audit.stdout).toMatch(
      /^PASS +balances +\d+ balances rows checked: balance = top-ups \+ adjustments − charges, as the log adds up; 8 adjustments$/m,
    );
    for (const check of ['caps', 'months', 'read models'])
      expect(audit.stdout).toMatch(new RegExp(`^PASS +${check} `, 'm'));
  });

  it('exports the month’s adjustments among its charges', async () => {
    const exported = await runCli(['export', '--account', accountId, '--month', month], gateway.env);
    expect(exported.code, exported.stderr).toBe(0);
    const [header, ...lines] = exported.stdout.split('\r\n').filter(Boolean);
    const columns = (header as string).split(',');
    expect(columns.slice(-5)).toEqual([
      'adjustment_nanos',
      'adjustment_usd',
      'reference',
      'reason',
      'reverses',
    ]);
    const rows = lines.map((line) => Object.fromEntries(line.split(',').map((v, i) => [columns[i], v])));
    const adjustments = rows.filter((r) => r.kind === 'adjustment');
    expect(adjustments.map((r) => r.reference).sort()).toEqual(
      ['debit-1', 'credit-1', 'rev-1', 'held-2', 'cli-1', 'cli-2'].sort(),
    );
    const byReference = new Map(adjustments.map((r) => [r.reference, r]));
    expect(byReference.get('debit-1')).toMatchObject({
      adjustment_nanos: '-990000000',
      adjustment_usd: '-0.990000000',
      reason: 'chargeback',
      charged_nanos: '',
      reverses: '',
    });
    expect(byReference.get('rev-1')).toMatchObject({ adjustment_nanos: '-300000000', reverses: 'pay-2' });
    // The operator's text is written as text: a reason that looks like a formula is not one.
    expect(byReference.get('held-2')?.reason).toBe("'=fits");
    expect(rows.filter((r) => r.kind === 'settled').every((r) => r.adjustment_nanos === '')).toBe(true);
  });

  it('fails the audit on an adjustment that reverses a top-up the log never records', async () => {
    const planted = await json(await gateway.admin('/accounts', { name: 'planted' }));
    await gateway.admin(`/accounts/${planted.account_id}/top-ups`, { cents: 10, reference: 'p' });
    await adjust(planted.account_id, { cents: 1, reason: 'opens the month', reference: 'a' });
    await gateway.runtime.store.append(
      budgetStream(planted.account_id, next),
      [
        {
          id: randomUUID(),
          type: 'BalanceAdjusted',
          data: {
            accountId: planted.account_id,
            month: next,
            reference: 'forged',
            amountNanos: '-10000000',
            reason: 'no such top-up',
            reverses: 'never-paid',
          },
          metadata: { schemaVersion: 1 },
        },
      ],
      'any',
    );
    const audit = await runCli(['audit', '--account', planted.account_id], gateway.env);
    expect(audit.code).toBe(3);
    expect(audit.stdout).toMatch(/^FAIL +caps /m);
    expect(audit.stdout).toContain(
      'adjustment forged of -$0.010000000 reverses top-up never-paid, which the log never records',
    );
  });
});
