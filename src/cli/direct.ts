import type { EventStore } from '../../events/store.ts';
import { findApiKey } from '../../projections/api-keys/index.ts';
import { projections } from '../../projections/index.ts';
import { allInstancesReached } from '../accounts/instance-positions.ts';
import { NamedKeys } from '../accounts/named-keys.ts';
import { AccountService } from '../accounts/service.ts';
import type { Config } from '../config.ts';
import { type Database, openDatabase } from '../db/database.ts';
import { openEventStore } from '../eventstore/open.ts';
import { rebuildProjection } from '../projections/rebuild.ts';
import { catchUp } from '../projections/runner.ts';
import { ensureProjectionTables } from '../projections/tables.ts';

export interface DirectSession {
  database: Database;
  store: EventStore;
  accounts: AccountService;
  keys: NamedKeys;
  close(): Promise<void>;
}

/**
 * Works on the store itself: attaches to the embedded PostgreSQL a running gateway manages, or starts it for
 * the length of the command. Read models are brought up to date before and after, so that lookups see every
 * event even when no gateway is running to project them.
 */
export async function openDirect(config: Config): Promise<DirectSession> {
  const database = await openDatabase(config, { whenRunning: 'attach' });
  const store = await openEventStore(config, database);
  for (const stale of await ensureProjectionTables(database.pool, projections)) {
    await rebuildProjection(database.pool, store, stale);
  }
  await catchUp(database.pool, store, projections);
  const accounts = new AccountService(
    store,
    async (keyId) => (await findApiKey(database.pool, keyId))?.account_id,
  );
  const keys = new NamedKeys(
    store,
    async (keyId) => {
      const row = await findApiKey(database.pool, keyId);
      return row && { accountId: row.account_id, subAccountId: row.sub_account_id };
    },
    // Gateways running beside the CLI apply a key's change before the command says it is done.
    async (checkpoint) => void (await allInstancesReached(database.pool, store, checkpoint)),
  );
  return {
    database,
    store,
    accounts,
    keys,
    async close() {
      await catchUp(database.pool, store, projections);
      await store.close();
      await database.close();
    },
  };
}
