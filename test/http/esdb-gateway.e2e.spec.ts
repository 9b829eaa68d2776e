import { afterAll, beforeAll, expect, it } from 'vitest';
import { type EsdbTestServer, startEsdbServer } from '../esdb/server.ts';
import { runCli } from '../support/cli.ts';
import { eventually, startTestGateway, type TestGateway } from '../support/gateway.ts';
import { json } from '../support/json.ts';

let esdb: EsdbTestServer;
let gateway: TestGateway;

beforeAll(async () => {
  esdb = await startEsdbServer();
  gateway = await startTestGateway({ GATEWAY_EVENT_STORE: 'esdb', ESDB_URL: esdb.url });
});
afterAll(async () => {
  await gateway?.close();
  await esdb?.stop();
});

it('runs on EventStoreDB for events with read models in PostgreSQL', async () => {
  expect(gateway.runtime.store.kind).toBe('esdb');
  const created = await json(await gateway.admin('/accounts', { name: 'on-esdb' }));
  const topUp = await gateway.admin(`/accounts/${created.account_id}/top-ups`, {
    cents: 321,
    reference: 'p1',
  });
  expect(await json(topUp)).toMatchObject({ credited: true });
  const balance = () =>
    fetch(`${gateway.url}/v1/balance`, { headers: { authorization: `Bearer ${created.key}` } }).then(json);
  expect(await eventually(balance, (b) => b.cents === 321)).toEqual({ cents: 321, usd: 3.21 });

  // The CLI on the store directly writes to EventStoreDB; the gateway follows by subscription.
  const direct = { ...gateway.env, GATEWAY_URL: 'http://127.0.0.1:9' };
  const cli = await runCli(
    ['topup', '--account', created.account_id, '--cents', '9', '--reference', 'p2'],
    direct,
  );
  expect(cli.json).toMatchObject({ credited: true });
  expect(await eventually(balance, (b) => b.cents === 330)).toEqual({ cents: 330, usd: 3.3 });

  const rebuilt = await runCli(['projections', 'rebuild', 'balances'], gateway.env);
  expect(rebuilt.code).toBe(0);
  expect(await balance()).toEqual({ cents: 330, usd: 3.3 });
  const events = await gateway.runtime.store.readStream(`account-${created.account_id}`);
  expect(events.map((e) => e.type)).toEqual([
    'AccountOpened',
    'ApiKeyIssued',
    'AccountToppedUp',
    'AccountToppedUp',
  ]);
});
