import { expect, it } from 'vitest';
import { PostgresEventStore } from '../../src/eventstore/postgres/store.ts';
import { startTestGateway } from '../support/gateway.ts';

it('finishes accepted requests and their appends when closing', async () => {
  const gateway = await startTestGateway();
  const account = (await (await gateway.admin('/accounts', { name: 'closing' })).json()) as {
    account_id: string;
  };
  const store = gateway.runtime.store as PostgresEventStore;
  const sends = Array.from({ length: 100 }, (_, i) =>
    gateway.runtime.accounts.topUp(account.account_id, 1, `close-${i}`).then(
      () => i,
      () => -1,
    ),
  );
  const closing = gateway.runtime.close();
  const settled = await Promise.all(sends);
  await closing;
  expect(settled.filter((i) => i < 0)).toEqual([]);

  // Reopen the same schema: every acknowledged append is there.
  const { openDatabase } = await import('../../src/db/database.ts');
  const database = await openDatabase(
    { databaseUrl: gateway.env.DATABASE_URL, dataDir: '', dbSchema: gateway.env.GATEWAY_DB_SCHEMA as string },
    { whenRunning: 'attach' },
  );
  const reopened = await PostgresEventStore.open({
    pool: database.pool,
    listenConfig: database.clientConfig,
    schema: database.schema,
  });
  const events = await reopened.readStream(`account-${account.account_id}`);
  expect(events.filter((e) => e.type === 'AccountToppedUp')).toHaveLength(100);
  expect(store.kind).toBe('postgres');
  await reopened.close();
  await database.pool.end();
  gateway.runtime.close = async () => {};
  await gateway.close();
});
