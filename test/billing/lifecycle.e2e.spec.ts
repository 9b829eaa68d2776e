import { afterAll, beforeAll, expect, it } from 'vitest';
import { budgetStream } from '../../events/budget.ts';
import { dailyUsage } from '../../projections/usage/index.ts';
import { chat, say } from '../support/chat.ts';
import { eventually, startTestGateway, type TestGateway } from '../support/gateway.ts';
import { json } from '../support/json.ts';

let now = new Date('2026-05-10T12:00:00Z');
let gateway: TestGateway;

beforeAll(async () => {
  gateway = await startTestGateway({}, { clock: () => now, workerIntervalsMs: { expiry: 50, summary: 50 } });
});
afterAll(async () => {
  await gateway?.close();
});

const eventsOf = async (stream: string) =>
  (await gateway.runtime.store.readStream(stream)).map((e) => e.type);

it('records balance.low and balance.exhausted as spending crosses them', async () => {
  const account = await json(await gateway.admin('/accounts', { name: 'notices' }));
  await gateway.admin(`/accounts/${account.account_id}/top-ups`, { cents: 150, reference: 'p' });
  const big = { model: 'local/echo-pro', max_tokens: 1000, ...say('y '.repeat(1500)) };
  let status = 200;
  for (let i = 0; i < 200 && status === 200; i++) status = (await chat(gateway.url, account.key, big)).status;
  expect(status).toBe(402);
  const types = await eventsOf(budgetStream(account.account_id, '2026-05'));
  expect(types.filter((t) => t === 'BalanceLowReached')).toHaveLength(1);
  expect(types.filter((t) => t === 'BalanceExhausted')).toHaveLength(1);
});

it('releases a hold nobody settled once it expires', async () => {
  const account = await json(await gateway.admin('/accounts', { name: 'forgetful' }));
  await gateway.admin(`/accounts/${account.account_id}/top-ups`, { cents: 100, reference: 'p' });
  const auth = gateway.runtime.live.authenticate(account.key);
  const hold = await gateway.runtime.spending.reserve(auth as NonNullable<typeof auth>, {
    requestId: 'never-settled',
    tag: null,
    minNanos: 5_000_000n,
    maxNanos: 5_000_000n,
  });
  now = new Date(now.getTime() + 16 * 60 * 1000);
  const stream = budgetStream(account.account_id, '2026-05');
  const events = await eventually(
    () => gateway.runtime.store.readStream(stream),
    (list) => list.some((e) => e.type === 'SpendReleased'),
    5000,
  );
  expect(events.find((e) => e.type === 'SpendReleased')?.data).toMatchObject({
    holdId: hold.holdId,
    reason: 'expired',
    amountNanos: '5000000',
  });
});

it('records each account’s usage of the previous UTC day once', async () => {
  const account = await json(await gateway.admin('/accounts', { name: 'daily' }));
  await gateway.admin(`/accounts/${account.account_id}/top-ups`, { cents: 100, reference: 'p' });
  now = new Date('2026-05-11T09:00:00Z');
  for (let i = 0; i < 3; i++)
    expect((await chat(gateway.url, account.key, say(`day ${i}`))).status).toBe(200);
  // The day is summarized once, from the usage read model: it must hold the three requests before the day ends.
  const folded = await eventually(
    async () =>
      (await dailyUsage(gateway.runtime.database.pool, '2026-05-11')).find(
        (row) => row.account_id === account.account_id,
      )?.requests,
    (requests) => requests === '3',
    5000,
  );
  expect(folded).toBe('3');
  now = new Date('2026-05-12T00:06:00Z');
  const events = await eventually(
    () => gateway.runtime.store.readStream(`account-${account.account_id}`),
    (list) => list.some((e) => e.type === 'DailyUsageSummarized'),
    5000,
  );
  await new Promise((r) => setTimeout(r, 300));
  const summaries = (await gateway.runtime.store.readStream(`account-${account.account_id}`)).filter(
    (e) => e.type === 'DailyUsageSummarized',
  );
  expect(summaries).toHaveLength(1);
  expect(summaries[0]?.data).toMatchObject({ day: '2026-05-11', requests: 3 });
  expect(events.length).toBeGreaterThan(0);
});
