import { describe, expect, it } from 'vitest';
import type { WebhookDeliveryEvent } from '../../events/webhook.ts';
import {
  ATTEMPT_OFFSETS_MS,
  type DeliveryCommand,
  type DeliveryState,
  decide,
  evolve,
  initialState,
} from './delivery.ts';
import { decideSecret, evolveSecret, initialSecretState } from './secret.ts';

const t0 = new Date('2026-03-01T12:00:00.000Z');
const at = (ms: number) => new Date(t0.getTime() + ms);
const LEASE = 60_000;

const request: DeliveryCommand = {
  type: 'RequestDelivery',
  deliveryId: 'whd_1',
  accountId: 'acct_1',
  keyId: 'key_1',
  url: 'https://hooks.example.com/in',
  eventType: 'job.completed',
  eventId: 'evt_1',
  body: '{"id":"evt_1"}',
  source: 'job:job_1',
  now: t0,
};

/** Runs commands in order against the state they build, returning every event decided. */
function run(commands: DeliveryCommand[], from: WebhookDeliveryEvent[] = []) {
  let state: DeliveryState = from.reduce(evolve, initialState());
  const events: WebhookDeliveryEvent[] = [];
  for (const command of commands) {
    const decided = decide(command, state);
    state = decided.reduce(evolve, state);
    events.push(...decided);
  }
  return { state, events };
}

const claim = (ms: number): DeliveryCommand => ({ type: 'ClaimAttempt', now: at(ms), leaseMs: LEASE });
const fail = (attempt: number, ms: number): DeliveryCommand => ({
  type: 'RecordAttempt',
  attempt,
  now: at(ms),
  outcome: { delivered: false, status: 500, error: null },
});

describe('webhook delivery decider', () => {
  it('records a request once: asking again decides nothing', () => {
    const { events } = run([request, request]);
    const {
      type: _type,
      now: _now,
      ...data
    } = request as Extract<DeliveryCommand, { type: 'RequestDelivery' }>;
    expect(events).toEqual([
      { type: 'WebhookDeliveryRequested', data: { ...data, firstAttemptAt: t0.toISOString() } },
    ]);
  });

  it('claims the first attempt at once and no attempt before it is due', () => {
    const { events } = run([request, claim(0), claim(1000)]);
    expect(events.map((e) => e.type)).toEqual(['WebhookDeliveryRequested', 'WebhookAttemptStarted']);
    expect(events[1]?.data).toMatchObject({ attempt: 1, leaseUntil: at(LEASE).toISOString() });
  });

  it('schedules six attempts at 0s, 30s, 2m, 10m, 1h, 6h after the first, then abandons', () => {
    const commands: DeliveryCommand[] = [request];
    ATTEMPT_OFFSETS_MS.forEach((offset, i) => {
      commands.push(claim(offset - 1), claim(offset), fail(i + 1, offset + 200));
    });
    commands.push(claim(ATTEMPT_OFFSETS_MS[5] + 86_400_000));
    const { events, state } = run(commands);
    const started = events.filter((e) => e.type === 'WebhookAttemptStarted');
    expect(started.map((e) => e.data.at)).toEqual(ATTEMPT_OFFSETS_MS.map((o) => at(o).toISOString()));
    const failed = events.filter((e) => e.type === 'WebhookAttemptFailed');
    expect(failed.map((e) => e.data.nextAttemptAt)).toEqual([
      ...ATTEMPT_OFFSETS_MS.slice(1).map((o) => at(o).toISOString()),
      null,
    ]);
    expect(events.at(-1)).toEqual({
      type: 'WebhookAbandoned',
      data: {
        deliveryId: 'whd_1',
        accountId: 'acct_1',
        attempts: 6,
        at: at(ATTEMPT_OFFSETS_MS[5] + 200).toISOString(),
      },
    });
    expect(state.status).toBe('abandoned');
  });

  it('stops at the first 2xx', () => {
    const { events, state } = run([
      request,
      claim(0),
      fail(1, 100),
      claim(30_000),
      { type: 'RecordAttempt', attempt: 2, now: at(30_100), outcome: { delivered: true, status: 204 } },
      claim(120_000),
    ]);
    expect(events.at(-1)).toMatchObject({ type: 'WebhookDelivered', data: { attempt: 2, status: 204 } });
    expect(state.status).toBe('delivered');
  });

  it('gives an attempt whose taker vanished to another taker once the lease runs out, under the same number', () => {
    const { events } = run([request, claim(0), claim(LEASE - 1), claim(LEASE)]);
    const started = events.filter((e) => e.type === 'WebhookAttemptStarted');
    expect(started.map((e) => [e.data.attempt, e.data.at])).toEqual([
      [1, t0.toISOString()],
      [1, at(LEASE).toISOString()],
    ]);
  });

  it('ignores the outcome of an attempt that is not the current one', () => {
    const { events } = run([request, claim(0), fail(2, 100), fail(1, 100), fail(1, 200)]);
    expect(events.filter((e) => e.type === 'WebhookAttemptFailed')).toHaveLength(1);
  });
});

describe('webhook secret decider', () => {
  it('moves the generation by one on every rotation', () => {
    const rotate = { type: 'RotateSecret' as const, keyId: 'key_1', accountId: 'acct_1', subAccountId: null };
    const first = decideSecret(rotate, initialSecretState());
    const state = first.reduce(evolveSecret, initialSecretState());
    expect(first[0]?.data.generation).toBe(1);
    expect(decideSecret(rotate, state)[0]?.data.generation).toBe(2);
  });
});
