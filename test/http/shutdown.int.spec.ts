import { expect, it } from 'vitest';
import { openDatabase } from '../../src/db/database.ts';
import { testStore } from '../support/database.ts';
import { startTestGateway } from '../support/gateway.ts';
import { json } from '../support/json.ts';

it('finishes accepted requests and their appends when closing', async () => {
  const gateway = await startTestGateway();
  const account = await json(await gateway.admin('/accounts', { name: 'closing' }));
  const acknowledged: string[] = [];
  const statuses = new Set<number>();
  let firstAck: () => void = () => {};
  const acked = new Promise<void>((resolve) => {
    firstAck = resolve;
  });
  const lanes = Array.from({ length: 10 }, async (_, lane) => {
    for (let i = 0; i < 20; i++) {
      const reference = `close-${lane}-${i}`;
      const response = await gateway
        .admin(`/accounts/${account.account_id}/top-ups`, { cents: 1, reference })
        .catch(() => undefined);
      if (!response) return;
      statuses.add(response.status);
      if (response.status !== 200) return;
      acknowledged.push(reference);
      firstAck();
    }
  });
  await acked;
  await gateway.runtime.close();
  await Promise.all(lanes);
  expect(acknowledged.length).toBeGreaterThan(0);
  // Requests already accepted finish; later ones are turned away, never failed half-way.
  expect([...statuses].filter((s) => s !== 200 && s !== 503)).toEqual([]);

  // Reopen the same schema: every acknowledged top-up is there.
  const database = await openDatabase(
    { databaseUrl: gateway.env.DATABASE_URL, dataDir: '', dbSchema: gateway.env.GATEWAY_DB_SCHEMA as string },
    { whenRunning: 'attach' },
  );
  const store = await testStore(database);
  const stored = (await store.readStream(`account-${account.account_id}`))
    .filter((e) => e.type === 'AccountToppedUp')
    .map((e) => (e.data as { reference: string }).reference);
  for (const reference of acknowledged) expect(stored).toContain(reference);
  await store.close();
  await database.pool.end();
  gateway.runtime.close = async () => {};
  await gateway.close();
});
