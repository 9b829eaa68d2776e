import { describe } from 'vitest';
import { EsdbEventStore } from '../../src/eventstore/esdb/store.ts';
import { startEsdbServer } from '../esdb/server.ts';
import { eventStoreContract } from './contract.ts';

eventStoreContract('esdb (in-process server speaking the EventStoreDB gRPC protocol)', async () => {
  const server = await startEsdbServer();
  const store = EsdbEventStore.connect(server.url);
  return {
    store,
    async close() {
      await store.close();
      await server.stop();
    },
  };
});

const realServer = process.env.ESDB_URL;
describe.runIf(realServer)('real EventStoreDB (ESDB_URL)', () => {
  eventStoreContract(`esdb at ${realServer}`, async () => {
    const store = EsdbEventStore.connect(realServer as string);
    return { store, close: () => store.close() };
  });
});
