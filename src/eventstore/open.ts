import type { EventStore } from '../../events/store.ts';
import type { Config } from '../config.ts';
import type { Database } from '../db/database.ts';
import { PostgresEventStore } from './postgres/store.ts';

export async function openEventStore(
  config: Pick<Config, 'eventStore' | 'esdbUrl'>,
  database: Database,
): Promise<EventStore> {
  switch (config.eventStore) {
    case 'esdb': {
      // Its client (gRPC) is a few MB of heap that a gateway on PostgreSQL never needs.
      const { EsdbEventStore } = await import('./esdb/store.ts');
      return EsdbEventStore.connect(config.esdbUrl as string);
    }
    case 'postgres':
      return PostgresEventStore.open({
        // Appends get connections of their own, so that projection work never makes a request wait for one. One
        // batch of appends is written at a time; the second connection serves the writers' stream reads.
        pool: database.dedicatedPool(database.embedded ? 2 : 4),
        listenConfig: database.clientConfig,
        schema: database.schema,
      });
    default: {
      const _exhaustive: never = config.eventStore;
      throw new Error(`unknown event store ${String(_exhaustive)}`);
    }
  }
}
