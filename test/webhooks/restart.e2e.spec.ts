import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { dropSchema } from '../support/database.ts';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';
import {
  manualClock,
  openAccount,
  settledAttempt,
  signedWith,
  sleep,
  startReceiver,
  until,
} from './support.ts';

const schema = `g_${randomBytes(6).toString('hex')}`;
// The secrets derive from the admin token: both gateways are the same installation.
const adminToken = `gw-admin-${randomBytes(16).toString('hex')}`;
const env = { GATEWAY_ALLOW_PRIVATE_URLS: 'true', GATEWAY_ADMIN_TOKEN: adminToken };
const T0 = new Date('2026-05-05T10:00:00.000Z');
const clock = manualClock(T0);
const open: TestGateway[] = [];

afterAll(async () => {
  for (const gateway of open) await gateway.close().catch(() => undefined);
  await dropSchema(schema);
});

describe('webhook retries across a restart', () => {
  it('fires a pending retry on time from a gateway started after the first stopped', async () => {
    const receiver = await startReceiver((n) => ({ status: n === 1 ? 500 : 200 }));
    const first = await startTestGateway(env, {
      schema,
      clock: clock.now,
      workerIntervalsMs: { webhooks: 20 },
    });
    open.push(first);
    const account = await openAccount(first.url, adminToken);
    const secret = (
      await until(
        async () => {
          const r = await fetch(`${first.url}/v1/webhook-secret`, {
            headers: { authorization: `Bearer ${account.key}` },
          });
          return { status: r.status, body: (await r.json()) as { secret: string } };
        },
        (r) => r.status === 200,
      )
    ).body.secret;
    const source = 'job:job_restart';
    const deliveryId = await first.runtime.webhooks.request({
      accountId: account.account_id,
      keyId: account.key_id,
      url: receiver.url,
      type: 'job.completed',
      data: { id: 'job_restart' },
      source,
    });
    const failed = await settledAttempt(first, source, 1);
    expect(failed).toMatchObject({ status: 'pending', last_status: 500 });
    expect(failed.next_attempt_at?.toISOString()).toBe(new Date(T0.getTime() + 30_000).toISOString());
    await first.close();
    open.pop();

    clock.set(10_000);
    const second = await startTestGateway(env, {
      schema,
      clock: clock.now,
      workerIntervalsMs: { webhooks: 20 },
    });
    open.push(second);
    clock.set(29_000);
    await sleep(300);
    expect(receiver.received).toHaveLength(1);

    clock.set(30_000);
    await until(
      () => receiver.received.length,
      (n) => n === 2,
    );
    const retry = receiver.received[1];
    expect(retry?.headers['x-gw-delivery-id']).toBe(deliveryId);
    expect(retry?.headers['x-gw-attempt']).toBe('2');
    expect(retry?.body).toBe(receiver.received[0]?.body);
    expect(signedWith(secret, retry, Math.floor(T0.getTime() / 1000) + 30)).toBe(true);
    expect(await settledAttempt(second, source, 2)).toMatchObject({ status: 'delivered', attempts: 2 });
    await receiver.close();
  });

  it('sends each attempt once when two instances share the store', async () => {
    clock.set(0);
    const receiver = await startReceiver((n) => ({ status: n < 3 ? 500 : 200 }));
    const a = await startTestGateway(env, { schema, clock: clock.now, workerIntervalsMs: { webhooks: 5 } });
    open.push(a);
    const b = await startTestGateway(env, { schema, clock: clock.now, workerIntervalsMs: { webhooks: 5 } });
    open.push(b);
    const account = await openAccount(a.url, adminToken);
    const source = 'job:job_two_instances';
    await b.runtime.webhooks.request({
      accountId: account.account_id,
      keyId: account.key_id,
      url: receiver.url,
      type: 'job.completed',
      data: {},
      source,
    });
    for (const [n, offset] of [
      [1, 0],
      [2, 30_000],
      [3, 120_000],
    ] as const) {
      clock.set(offset);
      await settledAttempt(a, source, n);
      await sleep(100);
      expect(receiver.received.map((r) => r.headers['x-gw-attempt'])).toEqual(
        Array.from({ length: n }, (_, i) => String(i + 1)),
      );
    }
    expect(await settledAttempt(b, source, 3)).toMatchObject({ status: 'delivered' });
    await receiver.close();
  });
});
