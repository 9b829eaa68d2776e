import { randomUUID } from 'node:crypto';
import { expect, it } from 'vitest';
import { StoreUnavailableError } from '../../events/store.ts';
import { freePort } from '../../src/db/embedded.ts';
import { EsdbEventStore } from '../../src/eventstore/esdb/store.ts';
import { describeError } from '../../src/http/errors.ts';

// A cluster that cannot be reached is a passing state: the gateway answers 503 with Retry-After, not 500.
it('reports an EventStoreDB that cannot be reached as unavailable, which the API answers with 503', async () => {
  const port = await freePort();
  const store = EsdbEventStore.connect(
    `esdb://127.0.0.1:${port}?tls=false&discoveryInterval=10&maxDiscoverAttempts=1`,
  );
  const event = { id: randomUUID(), type: 'Probe', data: {}, metadata: {} };
  const appended = store
    .append(`probe-${randomUUID()}`, [event as never], 'any')
    .catch((error: unknown) => error);
  const read = store.readAll('').catch((error: unknown) => error);
  for (const error of [await appended, await read]) {
    expect(error).toBeInstanceOf(StoreUnavailableError);
    const described = describeError(error);
    expect(described.status).toBe(503);
    expect(described.headers).toEqual({ 'retry-after': '2' });
  }
  await store.close().catch(() => undefined);
});
