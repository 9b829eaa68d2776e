import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { budgetStream, monthOf } from '../../events/budget.ts';
import { type ChatCall, chat, say } from '../support/chat.ts';
import { runCli } from '../support/cli.ts';
import { eventually, startTestGateway, type TestGateway } from '../support/gateway.ts';
import { json } from '../support/json.ts';
import { logicalStream } from '../support/logical-events.ts';

// A served request is one stored event: its settlement carries the hold carved for it from a spend lease and its
// record (events/logical.ts). Requests held on their own (before a lease exists) keep their durable hold.

const REQUESTS = 60;
const IN_FLIGHT = 6;

let gateway: TestGateway;
let accountId: string;
let key: string;

beforeAll(async () => {
  gateway = await startTestGateway({ GATEWAY_REQUEST_BODIES: 'drop' });
  const account = await json(await gateway.admin('/accounts', { name: 'one event' }));
  accountId = account.account_id as string;
  key = account.key as string;
  await gateway.admin(`/accounts/${accountId}/top-ups`, { cents: 1000, reference: 'funding' });
  await gateway.admin(`/accounts/${accountId}/settings`, { rate_limit_rpm: 1_000_000 });
}, 60_000);
afterAll(async () => {
  await gateway?.close();
});

/** The stored events of the account's budget stream that name a request, by the request's id. */
async function storedByRequest(): Promise<Map<string, string[]>> {
  const stream = budgetStream(accountId, monthOf(new Date()));
  const byRequest = new Map<string, string[]>();
  for (const stored of await gateway.runtime.store.readStream(stream)) {
    const data = stored.data as { requestId?: string; holdId?: string; lease?: boolean };
    if (data.lease === true || data.requestId === undefined) continue;
    byRequest.set(data.requestId, [...(byRequest.get(data.requestId) ?? []), stored.type]);
  }
  return byRequest;
}

describe('one served request, one event', () => {
  const calls: ChatCall[] = [];

  it('stores a request served under a spend lease as one event that stands for its hold, charge and record', async () => {
    let next = 0;
    const worker = async () => {
      while (next < REQUESTS) {
        next += 1;
        calls.push(await chat(gateway.url, key, { max_tokens: 8, cache: 'skip', ...say(`hello ${next}`) }));
      }
    };
    await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
    expect(calls.every((c) => c.status === 200)).toBe(true);
    // The lease goes back once idle; nothing of its holds is left in memory.
    await gateway.runtime.spending.returnLeases();

    const byRequest = await storedByRequest();
    const ids = calls.map((c) => c.headers.get('x-gw-request-id') as string);
    const shapes = ids.map((id) => (byRequest.get(id) ?? []).join(','));
    const single = shapes.filter((s) => s === 'SpendSettled').length;
    const held = shapes.filter((s) => s === 'SpendReserved,SpendSettled').length;
    // Every request is one of the two shapes; the first few hold on their own while the lease is asked for.
    expect(single + held).toBe(REQUESTS);
    expect(single).toBeGreaterThan(REQUESTS / 2);

    // What the single event stands for: the carve from the lease, the settlement, the request's record.
    const logical = await logicalStream(gateway.runtime.store, budgetStream(accountId, monthOf(new Date())));
    const id = ids[shapes.indexOf('SpendSettled')] as string;
    const parts = logical.filter(
      (e) => e.data.requestId === id && (e.type !== 'SpendReserved' || e.data.leaseId !== undefined),
    );
    expect(parts.map((e) => e.type)).toEqual(['SpendReserved', 'SpendSettled', 'RequestCompleted']);
    expect(parts[0]?.data.leaseId).toMatch(/^lease_/);
  }, 60_000);

  it('answers the read models as before: the request log and the balance', async () => {
    const charged = calls.reduce((sum, c) => sum + Number(c.headers.get('x-cost-cents')), 0);
    const listed = await eventually(
      async () =>
        (await json(
          await fetch(`${gateway.url}/v1/requests?limit=100`, {
            headers: { authorization: `Bearer ${key}` },
          }),
        )) as { data: { id: string }[] },
      (page) => page.data.length >= REQUESTS,
      10_000,
    );
    const ids = new Set(listed.data.map((r) => r.id));
    for (const c of calls) expect(ids.has(c.headers.get('x-gw-request-id') as string)).toBe(true);
    const balance = await eventually(
      async () =>
        (await json(
          await fetch(`${gateway.url}/v1/balance`, { headers: { authorization: `Bearer ${key}` } }),
        )) as {
          cents: number;
        },
      (b) => b.cents < 1000,
      10_000,
    );
    // Whole cents, rounded down: what was spent, rounded up.
    expect(1000 - balance.cents).toBe(Math.ceil(charged - 1e-9));
  });

  it('passes the audit, which folds each stored settlement as the events it stands for', async () => {
    const audit = await runCli(['audit'], gateway.env);
    for (const check of ['holds', 'caps', 'months', 'balances', 'pricing', 'read models'])
      expect(audit.stdout, audit.stdout).toMatch(new RegExp(`^PASS +${check}`, 'm'));
    expect(audit.code, audit.stdout).toBe(0);
  }, 60_000);
});
