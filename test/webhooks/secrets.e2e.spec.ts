import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runAudit } from '../../src/audit/audit.ts';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';
import {
  api,
  manualClock,
  openAccount,
  type Receiver,
  settledAttempt,
  signedWith,
  startReceiver,
  until,
} from './support.ts';

const T0 = new Date('2026-04-10T08:00:00.000Z');
const clock = manualClock(T0);
const nowSeconds = () => Math.floor(clock.now().getTime() / 1000);
let gateway: TestGateway;
let endpoint: Receiver;
let account: { account_id: string; key: string; key_id: string };

const secretOf = async (key: string) => {
  const { status, body } = await api(gateway, key, '/webhook-secret');
  expect(status).toBe(200);
  return body;
};
const ofType = (type: string) => endpoint.received.filter((r) => r.headers['x-gw-event-type'] === type);

beforeAll(async () => {
  gateway = await startTestGateway(
    { GATEWAY_ALLOW_PRIVATE_URLS: 'true' },
    { clock: clock.now, workerIntervalsMs: { webhooks: 20 } },
  );
  endpoint = await startReceiver();
  account = await openAccount(gateway.url, gateway.adminToken);
  const set = await gateway.admin(`/accounts/${account.account_id}/webhook-endpoint`, { url: endpoint.url });
  expect(set.status).toBe(200);
  expect(await set.json()).toEqual({ account_id: account.account_id, url: endpoint.url });
});
afterAll(async () => {
  await gateway?.close();
  await endpoint?.close();
});

describe('webhook secrets', () => {
  it('gives each key its own secret; rotation replaces it at once and raises key.rotated', async () => {
    const before = await until(
      () => api(gateway, account.key, '/webhook-secret'),
      (r) => r.status === 200,
    );
    expect(before.body).toEqual({
      object: 'webhook_secret',
      secret: expect.stringMatching(/^whsec_[A-Za-z0-9_-]{43}$/),
      key_id: account.key_id,
      generation: 0,
    });
    expect((await secretOf(account.key)).secret).toBe(before.body.secret);

    // A callback waiting for its retry when the secret rotates is signed with the new secret.
    const jobReceiver = await startReceiver((n) => ({ status: n === 1 ? 500 : 200 }));
    const source = 'job:job_rotation';
    await gateway.runtime.webhooks.request({
      accountId: account.account_id,
      keyId: account.key_id,
      url: jobReceiver.url,
      type: 'job.completed',
      data: {},
      source,
    });
    await settledAttempt(gateway, source, 1);
    expect(signedWith(before.body.secret as string, jobReceiver.received[0], nowSeconds())).toBe(true);

    const rotated = await api(gateway, account.key, '/webhook-secret/rotate', { method: 'POST' });
    expect(rotated.status).toBe(200);
    expect(rotated.body).toMatchObject({ object: 'webhook_secret', key_id: account.key_id, generation: 1 });
    const after = rotated.body.secret as string;
    expect(after).toMatch(/^whsec_/);
    expect(after).not.toBe(before.body.secret);
    expect((await secretOf(account.key)).secret).toBe(after);

    const [notice] = await until(
      () => ofType('key.rotated'),
      (list) => list.length === 1,
    );
    expect(JSON.parse(notice?.body ?? '{}')).toMatchObject({
      type: 'key.rotated',
      data: { account_id: account.account_id, key_id: account.key_id, sub_account_id: null },
    });
    expect(signedWith(after, notice, nowSeconds())).toBe(true);
    expect(signedWith(before.body.secret as string, notice, nowSeconds())).toBe(false);

    clock.set(30_000);
    await settledAttempt(gateway, source, 2);
    expect(signedWith(after, jobReceiver.received[1], nowSeconds())).toBe(true);
    expect(signedWith(before.body.secret as string, jobReceiver.received[1], nowSeconds())).toBe(false);
    await jobReceiver.close();
  });

  it("delivers sub-account lifecycle events to the account's endpoint, signed with the main key's secret", async () => {
    expect(
      (await gateway.admin(`/accounts/${account.account_id}/top-ups`, { cents: 1000, reference: 'r1' }))
        .status,
    ).toBe(200);
    const created = await until(
      () => api(gateway, account.key, '/sub-accounts', { body: { name: 'Customer', spend_cap_cents: 500 } }),
      (r) => r.status === 200 || r.status === 201,
    );
    const subKey = created.body.key as string;
    const subId = created.body.id as string;
    const [notice] = await until(
      () => ofType('subaccount.created'),
      (list) => list.length === 1,
    );
    expect(JSON.parse(notice?.body ?? '{}')).toMatchObject({
      type: 'subaccount.created',
      data: { account_id: account.account_id, sub_account_id: subId, name: 'Customer', spend_cap_cents: 500 },
    });
    const mainSecret = (await secretOf(account.key)).secret as string;
    expect(signedWith(mainSecret, notice, nowSeconds())).toBe(true);

    const subSecret = await until(
      () => api(gateway, subKey, '/webhook-secret'),
      (r) => r.status === 200,
    );
    expect(subSecret.body.secret).not.toBe(mainSecret);
    expect(subSecret.body.key_id).not.toBe(account.key_id);
    await api(gateway, subKey, '/webhook-secret/rotate', { method: 'POST' });
    const rotations = await until(
      () => ofType('key.rotated'),
      (list) => list.length === 2,
    );
    expect(JSON.parse(rotations[1]?.body ?? '{}').data).toEqual({
      account_id: account.account_id,
      key_id: subSecret.body.key_id,
      sub_account_id: subId,
    });
    expect(signedWith(mainSecret, rotations[1], nowSeconds())).toBe(true);
    // The main key's secret did not move.
    expect((await secretOf(account.key)).secret).toBe(mainSecret);
  });

  it('sends nothing more once the operator clears the endpoint', async () => {
    const cleared = await gateway.admin(`/accounts/${account.account_id}/webhook-endpoint`, { url: null });
    expect(await cleared.json()).toEqual({ account_id: account.account_id, url: null });
    const count = endpoint.received.length;
    await api(gateway, account.key, '/webhook-secret/rotate', { method: 'POST' });
    await new Promise((r) => setTimeout(r, 300));
    expect(endpoint.received).toHaveLength(count);
  });

  it('leaves a log the audit finds whole: streams, schemas, and the read model rebuilt from zero', async () => {
    await gateway.runtime.runner.caughtUpTo(gateway.runtime.live.position());
    for (const accountId of [undefined, account.account_id]) {
      const outcome = await runAudit(gateway.runtime.database.pool, gateway.runtime.store, { accountId });
      expect(outcome.report).not.toMatch(/^FAIL/m);
      expect(outcome.ok).toBe(true);
    }
  });
});
