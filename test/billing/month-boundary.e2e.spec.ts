import { afterAll, beforeAll, expect, it } from 'vitest';
import { budgetStream } from '../../events/budget.ts';
import { chat, say } from '../support/chat.ts';
import { eventually, startTestGateway, type TestGateway } from '../support/gateway.ts';
import { json } from '../support/json.ts';

let now = new Date('2026-01-31T23:58:00Z');
let gateway: TestGateway;

beforeAll(async () => {
  gateway = await startTestGateway({}, { clock: () => now });
});
afterAll(async () => {
  await gateway?.close();
});

const v1 = (method: string, path: string, key: string, body?: unknown) =>
  fetch(`${gateway.url}/v1${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  }).then(json);

it('carries lifetime caps and open holds into the next UTC month, and starts tag budgets afresh', async () => {
  const account = await json(await gateway.admin('/accounts', { name: 'monthly' }));
  const accountId: string = account.account_id;
  await gateway.admin(`/accounts/${accountId}/top-ups`, { cents: 1000, reference: 'jan' });
  // A sub-account spends under the default tag its account gave it (a header cannot move it elsewhere).
  const sub = await v1('POST', '/sub-accounts', account.key, {
    name: 'm',
    spend_cap_cents: 100,
    default_tag: 'monthly-tag',
  });
  await v1('POST', '/budgets', account.key, { tag: 'monthly-tag', cap_cents: 50 });
  const request = { model: 'local/echo-pro', max_tokens: 400, ...say('x '.repeat(400)) };

  const january: number[] = [];
  for (let i = 0; i < 200; i++) {
    const response = await chat(gateway.url, sub.key, request, { 'x-gw-tag': 'monthly-tag' });
    if (response.status !== 200) {
      expect(response.body.error.message).toContain("tag 'monthly-tag'");
      break;
    }
    january.push(Number(response.headers.get('x-cost-cents')));
  }
  const januarySpent = january.reduce((a, b) => a + b, 0);
  expect(januarySpent).toBeLessThanOrEqual(50);
  expect(januarySpent).toBeGreaterThan(40);

  // A request in flight across midnight: reserved in January, settled in February.
  const auth = gateway.runtime.live.authenticate(sub.key);
  const hold = await gateway.runtime.spending.reserve(auth as NonNullable<typeof auth>, {
    requestId: 'across-midnight',
    tag: 'monthly-tag',
    minNanos: 1_000_000n,
    maxNanos: 1_000_000n,
  });

  now = new Date('2026-02-01T00:01:00Z');
  const { priceCharge } = await import('../../src/contracts/money.ts');
  const charge = priceCharge([
    { item: 'output_tokens', quantity: 10, unitPriceNanosPerMillion: 50_000_000_000n },
  ]);
  await gateway.runtime.spending.settle(hold, {
    actualNanos: charge.chargedNanos,
    model: 'local/echo-pro',
    provider: 'local',
    charge,
    usageReported: true,
    units: 10,
  });

  // The tag's budget is monthly: February starts afresh. The sub-account's cap is lifetime: it carries over.
  const february: number[] = [];
  for (let i = 0; i < 200; i++) {
    const response = await chat(gateway.url, sub.key, request, { 'x-gw-tag': 'monthly-tag' });
    if (response.status !== 200) break;
    february.push(Number(response.headers.get('x-cost-cents')));
  }
  const februarySpent = february.reduce((a, b) => a + b, 0) + 0.05;
  expect(februarySpent).toBeGreaterThan(0);
  expect(januarySpent + februarySpent).toBeLessThanOrEqual(100);

  const store = gateway.runtime.store;
  const jan = await store.readStream(budgetStream(accountId, '2026-01'));
  const feb = await store.readStream(budgetStream(accountId, '2026-02'));
  expect(jan[0]?.type).toBe('BudgetMonthOpened');
  expect(jan[jan.length - 1]?.type).toBe('BudgetMonthClosed');
  const closed = jan[jan.length - 1]?.data as {
    openHolds: { holdId: string }[];
    lifetimeChargedNanos: string;
  };
  expect(closed.openHolds.map((h) => h.holdId)).toEqual([hold.holdId]);
  const opened = feb[0]?.data as { lifetimeChargedNanos: string; month: string };
  expect(feb[0]?.type).toBe('BudgetMonthOpened');
  expect(opened).toMatchObject({ month: '2026-02', lifetimeChargedNanos: closed.lifetimeChargedNanos });
  const settled = feb.find(
    (e) => e.type === 'SpendSettled' && (e.data as { holdId: string }).holdId === hold.holdId,
  );
  expect(settled?.data).toMatchObject({ month: '2026-02', heldNanos: '1000000' });
  expect(settled?.occurredAt.toISOString()).toBe('2026-02-01T00:01:00.000Z');

  const janUsage = await eventually(
    () => v1('GET', '/usage/by-tag?month=2026-01', account.key),
    (u) => u.data.length === 1 && Math.abs(u.data[0].cost_cents - januarySpent) < 1e-6,
    3000,
  );
  expect(janUsage.data[0]).toMatchObject({ tag: 'monthly-tag', requests: january.length });
  const febUsage = await eventually(
    () => v1('GET', '/usage/by-tag?month=2026-02', account.key),
    (u) => u.data.length === 1 && u.data[0].requests === february.length + 1,
    3000,
  );
  expect(febUsage.data[0].tag).toBe('monthly-tag');
  expect((await v1('GET', '/usage/by-tag?month=2026-13', account.key)).error.code).toBe(400);
});
