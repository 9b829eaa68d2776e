import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { START } from '../../events/store.ts';
import { projections } from '../../projections/index.ts';
import { liveTables } from '../../projections/types.ts';
import { AccountService } from '../../src/accounts/service.ts';
import type { Database } from '../../src/db/database.ts';
import type { PostgresEventStore } from '../../src/eventstore/postgres/store.ts';
import { applyEvents } from '../../src/projections/apply.ts';
import { ProjectionRunner } from '../../src/projections/runner.ts';
import { ensureProjectionTables } from '../../src/projections/tables.ts';
import { readAllFrom } from '../eventstore/contract.ts';
import { testDatabase, testStore } from '../support/database.ts';
import { eventually } from '../support/gateway.ts';

let database: Database;
let store: PostgresEventStore;
let accounts: AccountService;

beforeAll(async () => {
  database = await testDatabase();
  store = await testStore(database);
  await ensureProjectionTables(database.pool, projections);
  accounts = new AccountService(store, async () => undefined);
});
afterAll(async () => {
  await store.close();
  await database.close();
});

const balanceRows = async () =>
  (await database.pool.query('SELECT * FROM balances ORDER BY account_id')).rows;
const checkpoint = async (name: string) =>
  (await database.pool.query('SELECT checkpoint FROM projection_checkpoints WHERE name = $1', [name])).rows[0]
    ?.checkpoint;

describe('projection runner', () => {
  it('lets one of two instances project while the other stands by, and hands over when it stops', async () => {
    const first = new ProjectionRunner({ pool: database.pool, store, projections });
    const second = new ProjectionRunner({ pool: database.pool, store, projections });
    first.start();
    await new Promise((r) => setTimeout(r, 200));
    second.start();
    const account = await accounts.createAccount('leased');
    await accounts.topUp(account.account_id, 100, 'a');
    const events = await readAllFrom(store, START);
    const head = events[events.length - 1]?.checkpoint as string;
    await first.caughtUpTo(head);
    expect(second.checkpoint('balances')).toBeUndefined();

    await first.stop();
    await accounts.topUp(account.account_id, 50, 'b');
    const after = await readAllFrom(store, START);
    await second.caughtUpTo(after[after.length - 1]?.checkpoint as string, 10_000);
    const rows = await eventually(balanceRows, (r) => r.length === 1);
    expect(rows[0]).toMatchObject({ account_id: account.account_id, balance_nanos: '1500000000' });
    await second.stop();
  });

  it('changes nothing when an event is folded twice', async () => {
    const events = await readAllFrom(store, START);
    const before = await balanceRows();
    const client = await database.pool.connect();
    try {
      for (const projection of projections)
        await applyEvents(client, projection, liveTables(projection), events);
    } finally {
      client.release();
    }
    expect(await balanceRows()).toEqual(before);
    expect(await checkpoint('balances')).toBe(events[events.length - 1]?.checkpoint);
  });
});
