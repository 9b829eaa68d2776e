import { randomBytes } from 'node:crypto';
import type { Provider } from '@pydantic/genai-prices';
import { afterAll, describe, expect, it } from 'vitest';
import { CATALOG_STREAM } from '../../events/catalog.ts';
import { dropSchema } from '../support/database.ts';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';
import { adminPost, openAccount, startReceiver, until } from './support.ts';

// Two starts of one installation over one store, the price list changed in between (as an upgrade changes it).
const schema = `g_${randomBytes(6).toString('hex')}`;
const adminToken = `gw-admin-${randomBytes(16).toString('hex')}`;
const env = { GATEWAY_ALLOW_PRIVATE_URLS: 'true', GATEWAY_ADMIN_TOKEN: adminToken };
const open: TestGateway[] = [];

afterAll(async () => {
  for (const gateway of open) await gateway.close().catch(() => undefined);
  await dropSchema(schema);
});

const model = (id: string, deprecated = false) => ({
  id,
  match: { equals: id },
  prices: { input_mtok: 1, output_mtok: 2 },
  ...(deprecated ? { deprecated: true } : {}),
});
const acme = (models: ReturnType<typeof model>[]): Provider => ({
  id: 'acme',
  name: 'Acme',
  api_pattern: 'https://acme',
  models,
});

const start = async (models: ReturnType<typeof model>[]) => {
  const gateway = await startTestGateway(env, {
    schema,
    catalog: { providers: [acme(models)] },
    workerIntervalsMs: { webhooks: 20 },
  });
  open.push(gateway);
  return gateway;
};

describe('model.added and model.deprecated', () => {
  it('are sent to every account endpoint when the catalog changed between two starts, and not on the first', async () => {
    const receiver = await startReceiver();
    const first = await start([model('alpha'), model('beta'), model('gamma')]);
    const account = await openAccount(first.url, adminToken);
    const set = await adminPost(first.url, adminToken, `/accounts/${account.account_id}/webhook-endpoint`, {
      url: receiver.url,
    });
    expect(set.status).toBe(200);
    // The first start only took a snapshot; a start with the same catalog records nothing.
    const snapshots = async (gateway: TestGateway) =>
      (await gateway.runtime.store.readStream(CATALOG_STREAM)).map((e) => e.data as { added: unknown[] });
    expect(await snapshots(first)).toHaveLength(1);
    expect((await snapshots(first))[0]?.added).toEqual([]);
    await first.close();
    open.length = 0;

    const same = await start([model('alpha'), model('beta'), model('gamma')]);
    expect(await snapshots(same)).toHaveLength(1);
    await same.close();
    open.length = 0;

    // beta deprecated, gamma gone, delta new.
    const second = await start([model('alpha'), model('beta', true), model('delta')]);
    const received = await until(
      () => receiver.received,
      (all) => all.length >= 3,
    );
    const events = received.map((r) => JSON.parse(r.body) as { type: string; data: { id: string } });
    expect(events.map((e) => `${e.type} ${e.data.id}`).sort()).toEqual([
      'model.added acme/delta',
      'model.deprecated acme/beta',
      'model.deprecated acme/gamma',
    ]);
    expect(events.find((e) => e.type === 'model.added')).toMatchObject({
      data: { id: 'acme/delta', provider: 'acme', modality: 'text', name: 'delta' },
    });
    expect(received.every((r) => r.headers['x-gw-signature'])).toBe(true);
    expect(await snapshots(second)).toHaveLength(2);
    await receiver.close();
  });
});
