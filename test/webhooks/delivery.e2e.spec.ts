import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ATTEMPT_OFFSETS_MS } from '../../commands/webhook/delivery.ts';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';
import {
  api,
  deliveryEvents,
  manualClock,
  openAccount,
  type Receiver,
  settledAttempt,
  signedWith,
  sleep,
  startReceiver,
  until,
} from './support.ts';

const T0 = new Date('2026-03-02T09:00:00.000Z');
const clock = manualClock(T0);
let gateway: TestGateway;
let account: { account_id: string; key: string; key_id: string };
let secret: string;

beforeAll(async () => {
  gateway = await startTestGateway(
    { GATEWAY_ALLOW_PRIVATE_URLS: 'true' },
    { clock: clock.now, workerIntervalsMs: { webhooks: 20 } },
  );
  account = await openAccount(gateway.url, gateway.adminToken);
  const got = await until(
    () => api(gateway, account.key, '/webhook-secret'),
    (r) => r.status === 200,
  );
  secret = got.body.secret as string;
});
afterAll(async () => {
  await gateway?.close();
});

/**
 * Walks the schedule: before each attempt the clock stands a second short of its offset and nothing may arrive;
 * at the offset the attempt arrives. Returns the offsets at which attempts arrived.
 */
async function walkSchedule(receiver: Receiver, source: string, attempts: number): Promise<void> {
  for (let n = 1; n <= attempts; n++) {
    const offset = ATTEMPT_OFFSETS_MS[n - 1] as number;
    if (n > 1) {
      clock.set(offset - 1000);
      await sleep(150);
      expect(receiver.received).toHaveLength(n - 1);
    }
    clock.set(offset);
    await until(
      () => receiver.received.length,
      (count) => count === n,
    );
    await settledAttempt(gateway, source, n);
  }
}

describe('webhook delivery', () => {
  it('signs every attempt, keeps the delivery id, counts attempts and retries on schedule until a 2xx', async () => {
    clock.set(0);
    const receiver = await startReceiver((n) => ({ status: n < 4 ? 500 : 204 }));
    const source = 'job:job_schedule_ok';
    const deliveryId = await gateway.runtime.webhooks.request({
      accountId: account.account_id,
      keyId: account.key_id,
      url: receiver.url,
      type: 'job.completed',
      data: { id: 'job_schedule_ok', status: 'completed' },
      source,
    });
    expect(deliveryId).toMatch(/^whd_[0-9a-f]{32}$/);
    // Asking again for the same source is the same delivery.
    expect(
      await gateway.runtime.webhooks.request({
        accountId: account.account_id,
        keyId: account.key_id,
        url: receiver.url,
        type: 'job.completed',
        data: { other: true },
        source,
      }),
    ).toBe(deliveryId);

    await walkSchedule(receiver, source, 4);
    clock.set(ATTEMPT_OFFSETS_MS[4] as number);
    await sleep(150);
    expect(receiver.received).toHaveLength(4);

    const first = receiver.received[0];
    const event = JSON.parse(first?.body ?? '{}');
    expect(event).toEqual({
      id: expect.stringMatching(/^evt_/),
      type: 'job.completed',
      occurred_at: Math.floor(T0.getTime() / 1000),
      data: { id: 'job_schedule_ok', status: 'completed' },
    });
    receiver.received.forEach((request, i) => {
      expect(request.method).toBe('POST');
      expect(request.headers['content-type']).toBe('application/json');
      expect(request.headers['x-gw-event-type']).toBe('job.completed');
      expect(request.headers['x-gw-delivery-id']).toBe(deliveryId);
      expect(request.headers['x-gw-attempt']).toBe(String(i + 1));
      expect(request.body).toBe(first?.body);
      const t = Math.floor((T0.getTime() + (ATTEMPT_OFFSETS_MS[i] as number)) / 1000);
      expect(request.headers['x-gw-signature']).toMatch(new RegExp(`^t=${t},v1=[0-9a-f]{64}$`));
      expect(signedWith(secret, request, t)).toBe(true);
      expect(signedWith(`${secret}x`, request, t)).toBe(false);
    });

    const row = await settledAttempt(gateway, source, 4);
    expect(row).toMatchObject({
      status: 'delivered',
      attempts: 4,
      last_status: 204,
      delivery_id: deliveryId,
    });
    const types = (await deliveryEvents(gateway, deliveryId)).map((e) => e.type);
    expect(types).toEqual([
      'WebhookDeliveryRequested',
      'WebhookAttemptStarted',
      'WebhookAttemptFailed',
      'WebhookAttemptStarted',
      'WebhookAttemptFailed',
      'WebhookAttemptStarted',
      'WebhookAttemptFailed',
      'WebhookAttemptStarted',
      'WebhookDelivered',
    ]);
    await receiver.close();
  });

  it('abandons after six failed attempts at 0s, 30s, 2m, 10m, 1h and 6h, recording each', async () => {
    clock.set(0);
    const receiver = await startReceiver(() => ({ status: 503 }));
    const source = 'job:job_schedule_fail';
    const deliveryId = await gateway.runtime.webhooks.request({
      accountId: account.account_id,
      keyId: account.key_id,
      url: receiver.url,
      type: 'job.failed',
      data: { id: 'job_schedule_fail', status: 'failed' },
      source,
    });
    await walkSchedule(receiver, source, 6);
    clock.set(7 * 24 * 3600 * 1000);
    await sleep(200);
    expect(receiver.received).toHaveLength(6);
    expect(receiver.received.map((r) => r.headers['x-gw-attempt'])).toEqual(['1', '2', '3', '4', '5', '6']);

    const row = await settledAttempt(gateway, source, 6);
    expect(row).toMatchObject({ status: 'abandoned', attempts: 6, last_status: 503, next_attempt_at: null });
    const events = await deliveryEvents(gateway, deliveryId);
    const failed = events.filter((e) => e.type === 'WebhookAttemptFailed');
    expect(failed.map((e) => (e.data as { attempt: number }).attempt)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(failed.map((e) => (e.data as { status: number }).status)).toEqual([503, 503, 503, 503, 503, 503]);
    expect(failed.map((e) => (e.data as { nextAttemptAt: string | null }).nextAttemptAt)).toEqual([
      ...ATTEMPT_OFFSETS_MS.slice(1).map((o) => new Date(T0.getTime() + o).toISOString()),
      null,
    ]);
    expect(events.filter((e) => e.type === 'WebhookAttemptStarted')).toHaveLength(6);
    expect(events.at(-1)?.type).toBe('WebhookAbandoned');
    await receiver.close();
  });

  it('records a receiver that cannot be reached as a failed attempt with the error', async () => {
    clock.set(0);
    const receiver = await startReceiver();
    const url = receiver.url;
    await receiver.close();
    const source = 'job:job_unreachable';
    await gateway.runtime.webhooks.request({
      accountId: account.account_id,
      keyId: account.key_id,
      url,
      type: 'job.failed',
      data: {},
      source,
    });
    const row = await settledAttempt(gateway, source, 1);
    expect(row).toMatchObject({
      status: 'pending',
      last_status: null,
      last_error: expect.stringMatching(/ECONNREFUSED/),
    });
  });
});
