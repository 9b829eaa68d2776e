import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { budgetStream } from '../../events/budget.ts';
import { toNewEvent } from '../../events/index.ts';
import { chat, say } from '../support/chat.ts';
import { runCli } from '../support/cli.ts';
import { eventually, startTestGateway, type TestGateway } from '../support/gateway.ts';
import { type Json, json } from '../support/json.ts';

// An account resells to its sub-accounts at its own price (docs/billing.md, Reselling): a markup with a per-model
// override, caps in the customer's price that renew per UTC period, statements, and an audit that re-derives it all.

let gateway: TestGateway;
let main: string;
let accountId: string;
let now = new Date('2026-03-10T12:00:00.000Z');
/** The customer at 30%, with 100% on local/echo-pro. */
let resold: Json;

const NANOS_PER_CENT = 10_000_000n;
const MARCH = '2026-03';
// local/echo-pro, about 2,400 input tokens and 1,000 output, worst case = actual (as test/faults/money.fault.spec.ts).
const LONG = {
  model: 'local/echo-pro',
  cache: 'skip',
  max_tokens: 1000,
  ...say(Array.from({ length: 1200 }, (_, i) => `w${i % 10}`).join(' ')),
};

const call = (
  method: string,
  path: string,
  key: string,
  body?: unknown,
  headers: Record<string, string> = {},
) =>
  fetch(`${gateway.url}/v1${path}`, {
    method,
    headers: {
      authorization: `Bearer ${key}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      ...headers,
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
const customer = async (settings: Record<string, unknown>) =>
  json(await call('POST', '/sub-accounts', main, { name: 'customer', ...settings }));
/** X-Cost-Cents back in nano-dollars (it is exact to the nano-dollar). */
const nanosOf = (cents: string | null) => BigInt(Math.round(Number(cents) * 1e7));
const priceAt = (cost: bigint, percent: bigint) => (cost * (100n + percent) + 99n) / 100n;

interface Charge {
  type: string;
  month: string;
  model: string;
  day: string;
  cost: bigint;
  price: bigint;
  margin: bigint;
  markup: number;
}

/** Every charge of a sub-account in the ledger (the log), overruns included. */
async function chargesOf(subAccountId: string): Promise<Charge[]> {
  const { rows } = await gateway.runtime.database.pool.query<{ type: string; data: Json }>(
    `SELECT type, data FROM events WHERE type IN ('SpendSettled', 'SpendOverrun')
       AND data->>'subAccountId' = $1 ORDER BY position`,
    [subAccountId],
  );
  return rows.map(({ type, data }) => ({
    type,
    month: data.month,
    model: data.charge?.model ?? data.model,
    day: data.day,
    cost: BigInt(data.chargedNanos ?? data.overrunNanos),
    price: BigInt(data.priceNanos),
    margin: BigInt(data.marginNanos),
    markup: data.markupBasisPoints,
  }));
}
const sum = (values: bigint[]) => values.reduce((a, b) => a + b, 0n);

beforeAll(async () => {
  gateway = await startTestGateway({}, { clock: () => now });
  ({ account_id: accountId, key: main } = await json(await gateway.admin('/accounts', { name: 'reseller' })));
  await gateway.admin(`/accounts/${accountId}/top-ups`, { cents: 100_000, reference: 'funding' });
});
afterAll(async () => {
  await gateway?.close();
});

describe('a sub-account at a 30% markup, with 100% on local/echo-pro', () => {
  let ownCost = 0n;

  it('charges the customer its price and the account its cost, the margin between them in every charge', async () => {
    resold = await customer({
      spend_cap_cents: 1_000,
      markup_percent: 30,
      price_overrides: [{ model: 'local/echo-pro', markup_percent: 100 }],
    });
    expect(resold).toMatchObject({ markup_percent: 30, spend_cap_reset: null, period_resets_at: null });
    const request = { ...say('Hello there, gateway!'), cache: 'skip' };
    const own = await chat(gateway.url, main, request);
    ownCost = nanosOf(own.headers.get('x-cost-cents'));
    // docs/billing.md, worked example 1: 5,040 nano-dollars; the customer pays ⌈5,040 × 1.3⌉ = 6,552.
    expect(ownCost).toBe(5_040n);
    const answer = await chat(gateway.url, resold.key, request);
    expect(answer.status).toBe(200);
    expect(answer.headers.get('x-cost-cents')).toBe('0.0006552');
    const pro = await chat(gateway.url, resold.key, { ...request, model: 'local/echo-pro' });
    const proOwn = await chat(gateway.url, main, { ...request, model: 'local/echo-pro' });
    const proCost = nanosOf(proOwn.headers.get('x-cost-cents'));
    ownCost += proCost;
    expect(nanosOf(pro.headers.get('x-cost-cents'))).toBe(priceAt(proCost, 100n));

    const charges = await chargesOf(resold.id);
    expect(charges.map((c) => [c.model, c.markup])).toEqual([
      ['local/echo', 3_000],
      ['local/echo-pro', 10_000],
    ]);
    for (const c of charges) {
      expect(c.price).toBe(priceAt(c.cost, BigInt(c.markup / 100)));
      expect(c.price - c.cost).toBe(c.margin);
      expect(c.day).toBe('2026-03-10');
    }
  });

  it('reports its price, the account’s cost and the margin per customer, and debits the balance the cost', async () => {
    const charges = await chargesOf(resold.id);
    const price = sum(charges.map((c) => c.price));
    const cost = sum(charges.map((c) => c.cost));
    const usage = await eventually(
      async () => json(await call('GET', `/usage/by-sub-account?month=${MARCH}`, main)),
      (u) => u.data.some((row: Json) => row.sub_account_id === resold.id && row.requests === 2),
      5_000,
    );
    expect(usage.data.find((row: Json) => row.sub_account_id === resold.id)).toMatchObject({
      requests: 2,
      cost_cents: Number(price) / 1e7,
      account_cost_cents: Number(cost) / 1e7,
      margin_cents: Number(price - cost) / 1e7,
    });
    // The customer's own views are in its price and never show the account's cost.
    const own = json(await call('GET', `/usage/by-sub-account?month=${MARCH}`, resold.key));
    expect((await own).data).toEqual([
      expect.not.objectContaining({ account_cost_cents: expect.anything() }),
    ]);
    const byModel = await json(await call('GET', `/usage/by-model?month=${MARCH}`, resold.key));
    expect(sum(byModel.data.map((row: Json) => nanosOf(String(row.cost_cents))))).toBe(price);
    const record = await json(await call('GET', `/sub-accounts/${resold.id}`, main));
    expect(record).toMatchObject({
      spent_cents: Number(price) / 1e7,
      spent_this_period_cents: Number(price) / 1e7,
    });
    // The operator's view is a read model: it shows every charge once the projections have folded them.
    const charged = await eventually(
      async () =>
        (
          await json(
            await fetch(`${gateway.url}/admin/accounts/${accountId}/balance`, {
              headers: { authorization: `Bearer ${gateway.adminToken}` },
            }),
          )
        ).charged_cents,
      (cents) => cents === Number(cost + ownCost) / 1e7,
      10_000,
    );
    expect(charged).toBe(Number(cost + ownCost) / 1e7);
    const left = await json(await call('GET', '/balance', resold.key));
    expect(left.cents).toBe(Number((1_000n * NANOS_PER_CENT - price) / NANOS_PER_CENT));
  });

  it('fills its cap in its price: fewer requests than the cost alone would allow', async () => {
    const probe = await chat(gateway.url, main, LONG);
    const cost = nanosOf(probe.headers.get('x-cost-cents'));
    const capped = await customer({ spend_cap_cents: 10, markup_percent: 30 });
    const price = priceAt(cost, 30n);
    const cap = 10n * NANOS_PER_CENT;
    expect(cap / price).toBeLessThan(cap / cost);
    let served = 0;
    for (;;) {
      const answer = await chat(gateway.url, capped.key, LONG);
      if (answer.status !== 200) {
        expect(answer.status).toBe(402);
        expect(answer.body.error.message).toContain(
          `Spend cap of sub-account ${capped.id} reached: cap $0.10`,
        );
        break;
      }
      served++;
    }
    expect(BigInt(served)).toBe(cap / price);
    expect(sum((await chargesOf(capped.id)).map((c) => c.price))).toBe(BigInt(served) * price);
  });
});

describe('a price book or a period out of range', () => {
  it('is refused with 400 naming the field', async () => {
    for (const [body, field] of [
      [{ markup_percent: 1_000.5 }, 'markup_percent'],
      [{ price_overrides: [{ model: 'local/*', markup_percent: -1 }] }, 'price_overrides'],
      [{ spend_cap_reset: 'hourly' }, 'spend_cap_reset'],
    ] as const) {
      const answer = await call('PATCH', `/sub-accounts/${resold.id}`, main, body);
      expect(answer.status).toBe(400);
      expect((await json(answer)).error.message).toContain(`'${field}`);
    }
  });
});

describe('caps that renew', () => {
  it('renews a daily cap at the next UTC day, and not before', async () => {
    const daily = await customer({ spend_cap_cents: 4, markup_percent: 30, spend_cap_reset: 'daily' });
    const first = await chat(gateway.url, daily.key, LONG);
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    const refused = await chat(gateway.url, daily.key, LONG);
    expect(refused.status).toBe(402);
    expect(refused.body.error.message).toContain('for the day 2026-03-10 (UTC)');
    expect(refused.body.error.message).toContain('The cap renews at 2026-03-11T00:00:00Z.');
    now = new Date('2026-03-10T23:59:00.000Z');
    expect((await chat(gateway.url, daily.key, LONG)).status).toBe(402);
    const spent = sum((await chargesOf(daily.id)).map((c) => c.price));
    const record = await eventually(
      async () => json(await call('GET', `/sub-accounts/${daily.id}`, main)),
      (r) => r.spent_this_period_cents > 0,
      5_000,
    );
    expect(record).toMatchObject({
      spend_cap_reset: 'daily',
      spent_this_period_cents: Number(spent) / 1e7,
      period_resets_at: Date.parse('2026-03-11T00:00:00Z') / 1000,
    });

    now = new Date('2026-03-11T00:00:05.000Z');
    expect((await chat(gateway.url, daily.key, LONG)).status).toBe(200);
    const renewed = await eventually(
      async () => json(await call('GET', `/sub-accounts/${daily.id}`, main)),
      (r) => r.spent_cents > Number(spent) / 1e7,
      5_000,
    );
    const charges = await chargesOf(daily.id);
    expect(charges.map((c) => c.day)).toEqual(['2026-03-10', '2026-03-11']);
    expect(renewed.spent_this_period_cents).toBe(Number(charges[1]?.price) / 1e7);
    expect(renewed.period_resets_at).toBe(Date.parse('2026-03-12T00:00:00Z') / 1000);
  });

  it('renews a monthly cap with the next UTC month, and not before', async () => {
    const monthly = await customer({ spend_cap_cents: 4, markup_percent: 30, spend_cap_reset: 'monthly' });
    expect((await chat(gateway.url, monthly.key, LONG)).status).toBe(200);
    now = new Date('2026-03-31T23:59:00.000Z');
    const refused = await chat(gateway.url, monthly.key, LONG);
    expect(refused.status).toBe(402);
    expect(refused.body.error.message).toContain('for 2026-03:');
    now = new Date('2026-04-01T00:00:05.000Z');
    expect((await chat(gateway.url, monthly.key, LONG)).status).toBe(200);
    expect((await chargesOf(monthly.id)).map((c) => c.month)).toEqual([MARCH, '2026-04']);
  });
});

describe('statements', () => {
  it('states a month per day and model in the customer’s price, as JSON and CSV, equal to the ledger', async () => {
    const subs = (await json(await call('GET', '/sub-accounts', main))).data as Json[];
    for (const sub of subs) {
      const charges = (await chargesOf(sub.id)).filter((c) => c.month === MARCH);
      const statement = await eventually(
        async () => json(await call('GET', `/sub-accounts/${sub.id}/statement?month=${MARCH}`, main)),
        (s) => s.total.cost_nanos === String(sum(charges.map((c) => c.price))),
        5_000,
      );
      expect(statement).toMatchObject({
        object: 'sub_account.statement',
        sub_account_id: sub.id,
        month: MARCH,
      });
      expect(statement.total.cost_nanos).toBe(String(sum(charges.map((c) => c.price))));
      const byLine = new Map<string, bigint>();
      for (const c of charges)
        byLine.set(`${c.day} ${c.model}`, (byLine.get(`${c.day} ${c.model}`) ?? 0n) + c.price);
      expect(statement.lines.map((l: Json) => [`${l.date} ${l.model}`, BigInt(l.cost_nanos)])).toEqual([
        ...byLine,
      ]);
      expect(statement.total.requests).toBe(charges.filter((c) => c.type === 'SpendSettled').length);

      const csv = await call('GET', `/sub-accounts/${sub.id}/statement?month=${MARCH}`, main, undefined, {
        accept: 'text/csv',
      });
      expect(csv.headers.get('content-type')).toContain('text/csv');
      const rows = (await csv.text()).split('\r\n').filter((line) => line !== '');
      expect(rows[0]).toBe('date,model,requests,units,input_tokens,output_tokens,cost_nanos,cost_usd');
      expect(rows).toHaveLength(statement.lines.length + 2);
      expect(rows.at(-1)?.split(',')).toEqual([
        'total',
        '',
        String(statement.total.requests),
        String(statement.total.units),
        String(statement.total.input_tokens),
        String(statement.total.output_tokens),
        statement.total.cost_nanos,
        (Number(statement.total.cost_nanos) / 1e9).toFixed(9),
      ]);
    }
    const [first] = subs;
    const own = await customer({ spend_cap_cents: 1 });
    expect((await call('GET', `/sub-accounts/${own.id}/statement?month=${MARCH}`, own.key)).status).toBe(403);
    const bad = await call('GET', `/sub-accounts/${first.id}/statement?month=2026-13`, main);
    expect(bad.status).toBe(400);
    expect((await json(bad)).error.message).toContain('month');
  });
});

describe('the audit', () => {
  it('re-derives every price and margin, and fails on a planted wrong margin', async () => {
    const passed = await runCli(['audit'], gateway.env);
    expect(passed.stdout).toMatch(/^PASS +resale +[1-9]\d* sub-account charges re-priced/m);
    expect(passed.stdout).toMatch(/^PASS +statements /m);
    expect(passed.stdout).toMatch(/^PASS +caps /m);
    expect(passed.code, passed.stdout).toBe(0);

    // A hold and its charge as the gateway writes them (a customer's with room under its cap), the margin off by
    // one nano-dollar.
    expect((await chat(gateway.url, resold.key, { ...say('in April'), cache: 'skip' })).status).toBe(200);
    const pool = gateway.runtime.database.pool;
    const { rows } = await pool.query<{ type: string; data: Json }>(
      `SELECT type, data FROM events WHERE type IN ('SpendReserved', 'SpendSettled') AND data->>'month' = '2026-04'
         AND data->>'holdId' = (SELECT data->>'holdId' FROM events WHERE type = 'SpendSettled'
           AND data->>'month' = '2026-04' AND data->>'subAccountId' = $1 ORDER BY position LIMIT 1)
       ORDER BY position`,
      [resold.id],
    );
    expect(rows.map((r) => r.type)).toEqual(['SpendReserved', 'SpendSettled']);
    const holdId = `hold_${randomUUID().replaceAll('-', '')}`;
    const planted = rows.map(({ type, data }) =>
      toNewEvent(
        {
          type,
          data: {
            ...data,
            holdId,
            requestId: holdId,
            ...(type === 'SpendSettled' && { marginNanos: String(BigInt(data.marginNanos) + 1n) }),
          },
        } as never,
        randomUUID(),
        { now },
      ),
    );
    const stream = budgetStream(accountId, '2026-04');
    const head = (await gateway.runtime.store.readStream(stream)).at(-1)?.revision ?? -1;
    await gateway.runtime.store.append(stream, planted, head);
    const failed = await runCli(['audit'], gateway.env);
    expect(failed.code).toBe(3);
    expect(failed.stdout).toMatch(/^FAIL +resale /m);
    expect(failed.stdout).toContain(`charge of hold ${holdId} records a margin of`);
    // The hold fits its cap, its lines its cost: the margin is the one thing wrong.
    expect(failed.stdout).toContain('Result: FAIL (1 of');
  });
});
