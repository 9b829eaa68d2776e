import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { budgetStream, monthOf } from '../../events/budget.ts';
import { type ChatCall, chat } from '../support/chat.ts';
import { runCli } from '../support/cli.ts';
import { eventually, startTestGateway, type TestGateway } from '../support/gateway.ts';
import { json } from '../support/json.ts';
import { logicalStream } from '../support/logical-events.ts';

// About 0.005 cents each on local/echo: ~83 input tokens, and the echo cut at max_tokens, so worst case = actual.
const TEXT = Array.from({ length: 80 }, (_, i) => `w${i % 10}`).join(' ');
const REQUEST = { model: 'local/echo', max_tokens: 60, messages: [{ role: 'user', content: TEXT }] };
const INSTANCES = 4;
const REQUESTS = 1000;
/** Requests in flight at once, over all instances. */
const IN_FLIGHT = 100;

let gateways: TestGateway[] = [];
const first = () => gateways[0] as TestGateway;

beforeAll(async () => {
  // Bodies are not what this test is about; four instances writing them would only slow it down.
  const env = { GATEWAY_REQUEST_BODIES: 'drop' };
  gateways = [await startTestGateway(env)];
  for (let i = 1; i < INSTANCES; i++)
    gateways.push(await startTestGateway(env, { schema: first().env.GATEWAY_DB_SCHEMA }));
}, 60_000);
afterAll(async () => {
  for (const gateway of gateways.reverse()) await gateway.close();
});

async function openAccount(name: string, cents: number) {
  const account = await json(await first().admin('/accounts', { name }));
  await first().admin(`/accounts/${account.account_id}/top-ups`, { cents, reference: 'funding' });
  await first().admin(`/accounts/${account.account_id}/settings`, { rate_limit_rpm: 1_000_000 });
  await everyInstanceSees(account.key, (b) => b.cents === cents);
  return { accountId: account.account_id as string, key: account.key as string };
}

async function everyInstanceSees(key: string, test: (balance: { cents: number }) => boolean) {
  for (const g of gateways) {
    await eventually(
      async () =>
        (await fetch(`${g.url}/v1/balance`, { headers: { authorization: `Bearer ${key}` } })).json(),
      (balance) => test(balance as { cents: number }),
      5000,
    );
  }
}

interface Scope {
  name: string;
  key: string;
  headers: Record<string, string>;
  calls: ChatCall[];
}

const cents = (calls: ChatCall[]) =>
  calls.filter((c) => c.status === 200).reduce((sum, c) => sum + Number(c.headers.get('x-cost-cents')), 0);

/** Each request answered 200 has exactly one settled charge in the read model. */
async function chargedOnce(served: ChatCall[]) {
  const ids = served.map((r) => r.headers.get('x-request-id'));
  const rows = await eventually(
    async () =>
      (
        await first().runtime.database.pool.query<{ request_id: string; n: string }>(
          `SELECT request_id, count(*) AS n FROM charges WHERE kind = 'settled' AND request_id = ANY($1)
           GROUP BY request_id`,
          [ids],
        )
      ).rows,
    (found) => found.length === ids.length,
    10_000,
  );
  expect(rows.length).toBe(ids.length);
  expect(rows.every((row) => row.n === '1')).toBe(true);
}

describe('spend leases: four instances sharing one store, 1,000 concurrent requests against three kinds of cap', () => {
  const scopes: Scope[] = [];
  const accounts: string[] = [];

  it('holds a sub-account cap, a tag budget and a balance exactly, and leaves less than two requests of each unusable', async () => {
    // Three scopes of $0.01 each, which about 200 of the ~333 requests sent to each fit.
    const main = await openAccount('leases', 10_000);
    const small = await openAccount('small', 1);
    accounts.push(main.accountId, small.accountId);
    const sub = await json(
      await fetch(`${first().url}/v1/sub-accounts`, {
        method: 'POST',
        headers: { authorization: `Bearer ${main.key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'capped', spend_cap_cents: 1, rate_limit_rpm: 1_000_000 }),
      }),
    );
    // Every instance knows the new key (a 401 has no balance).
    await everyInstanceSees(sub.key, (b) => typeof b.cents === 'number');
    const budget = await fetch(`${first().url}/v1/budgets`, {
      method: 'POST',
      headers: { authorization: `Bearer ${main.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ tag: 'campaign', cap_cents: 1 }),
    });
    expect(budget.status).toBe(200);
    // Every instance knows the budget before the load.
    for (const g of gateways) {
      await eventually(
        async () => g.runtime.live.account(main.accountId)?.tagBudgets.get('campaign'),
        (cap) => cap === 10_000_000n,
        5000,
      );
    }
    scopes.push(
      { name: 'sub-account', key: sub.key, headers: {}, calls: [] },
      { name: 'tag', key: main.key, headers: { 'x-gw-tag': 'campaign' }, calls: [] },
      { name: 'balance', key: small.key, headers: {}, calls: [] },
    );
    const before = await leaseUse(accounts);

    // The burst: round-robin over instances and scopes, 100 in flight.
    let next = 0;
    await Promise.all(
      Array.from({ length: IN_FLIGHT }, async () => {
        for (let i = next++; i < REQUESTS; i = next++) {
          const scope = scopes[i % scopes.length] as Scope;
          const url = (gateways[Math.floor(i / scopes.length) % INSTANCES] as TestGateway).url;
          scope.calls.push(await chat(url, scope.key, REQUEST, scope.headers));
        }
      }),
    );
    const burst = scopes.map((s) => ({ calls: s.calls.length, cents: cents(s.calls) }));
    // Then, once idle instances have returned their leases (read from the ledger, not waited for by the clock: a
    // busy machine returns them later), one at a time until each instance refuses.
    await eventually(
      () => openLeases(accounts),
      (open) => open === 0,
      10_000,
    );
    for (const scope of scopes) {
      for (const g of gateways) {
        for (let i = 0; i < 50; i++) {
          const call = await chat(g.url, scope.key, REQUEST, scope.headers);
          scope.calls.push(call);
          if (call.status !== 200) break;
        }
      }
    }

    for (const [i, scope] of scopes.entries()) {
      const served = scope.calls.filter((c) => c.status === 200);
      const refused = scope.calls.filter((c) => c.status === 402);
      const others = scope.calls
        .filter((c) => c.status !== 200 && c.status !== 402)
        .map((c) => `${c.status} ${JSON.stringify(c.body).slice(0, 300)}`);
      expect(served.length + refused.length, `${scope.name}: other answers ${others.join(', ')}`).toBe(
        scope.calls.length,
      );
      const largest = Math.max(...served.map((c) => Number(c.headers.get('x-cost-cents'))));
      const charged = cents(scope.calls);
      expect(charged, scope.name).toBeLessThanOrEqual(1);
      expect(charged, scope.name).toBeGreaterThan(1 - 2 * largest);
      // Within the burst itself, a request that only other instances' leases kept out waited for their return.
      expect(burst[i]?.cents, scope.name).toBeGreaterThan(1 - (INSTANCES + 1) * largest);
      expect(burst[i]?.calls, scope.name).toBeGreaterThan(300);
      await chargedOnce(served);
    }
    const [subRefused, tagRefused, balanceRefused] = scopes.map((s) => s.calls.find((c) => c.status === 402));
    expect(subRefused?.body.error.message).toMatch(/Spend cap of sub-account sa_\w+ reached: cap \$0\.01/);
    expect(tagRefused?.body.error.message).toMatch(/Monthly budget of tag 'campaign' reached: cap \$0\.01/);
    expect(balanceRefused?.body.error.type).toBe('insufficient_balance');

    // Leases served most of the burst; near the caps requests fell back to holds of their own.
    const after = await leaseUse(accounts);
    expect(after.leases).toBeGreaterThan(before.leases);
    expect(after.carved - before.carved).toBeGreaterThan(300);
    expect(after.ownHolds).toBeGreaterThan(before.ownHolds);
  }, 120_000);

  it('passes the audit: every lease and hold ended once, posted + pending within every limit throughout', async () => {
    const audit = await runCli(['audit'], first().env);
    for (const check of ['holds', 'caps', 'months', 'balances', 'pricing'])
      expect(audit.stdout, audit.stdout).toMatch(new RegExp(`^PASS +${check} `, 'm'));
    expect(audit.stdout).toMatch(
      /^PASS +holds +\d+ holds: .*; \d+ spend leases \(0 open\), \d+ holds carved from them/m,
    );
  }, 60_000);
});

/** The budget streams' leases and the holds carved from them, so the test knows leases were at work. */
/** Leases granted and not yet ended (returned, released or expired) on the accounts' budget streams. */
async function openLeases(accountIds: string[]): Promise<number> {
  const open = new Set<string>();
  for (const accountId of accountIds) {
    const events = await logicalStream(first().runtime.store, budgetStream(accountId, monthOf(new Date())));
    for (const e of events) {
      const data = e.data as { holdId?: string; lease?: boolean };
      if (e.type === 'SpendReserved' && data.lease === true) open.add(data.holdId as string);
      else if (e.type !== 'SpendReserved' && data.holdId !== undefined) open.delete(data.holdId);
    }
  }
  return open.size;
}

async function leaseUse(accountIds: string[]) {
  const reserved: Record<string, unknown>[] = [];
  for (const accountId of accountIds) {
    const events = await logicalStream(first().runtime.store, budgetStream(accountId, monthOf(new Date())));
    for (const e of events) if (e.type === 'SpendReserved') reserved.push(e.data);
  }
  return {
    leases: reserved.filter((d) => d.lease === true).length,
    carved: reserved.filter((d) => typeof d.leaseId === 'string').length,
    ownHolds: reserved.filter((d) => d.lease === undefined && d.leaseId === undefined).length,
  };
}
