import type { WebhookDeliveryEvent, WebhookEventTypeName } from '../../events/webhook.ts';

/** Attempts in all, and when each is due after the first: 0 s, 30 s, 2 min, 10 min, 1 h, 6 h. */
export const ATTEMPT_OFFSETS_MS = [0, 30_000, 120_000, 600_000, 3_600_000, 21_600_000] as const;
export const MAX_ATTEMPTS = ATTEMPT_OFFSETS_MS.length;

export type DeliveryStatus = 'none' | 'pending' | 'attempting' | 'delivered' | 'abandoned';

export interface DeliveryState {
  status: DeliveryStatus;
  deliveryId: string;
  accountId: string;
  keyId: string;
  url: string;
  eventType: WebhookEventTypeName | '';
  body: string;
  /** The number of the latest attempt taken (0 before the first). */
  attempt: number;
  /** When the first attempt started: the schedule counts from it. */
  firstStartedAt: string | null;
  nextAttemptAt: string | null;
  leaseUntil: string | null;
}

export function initialState(): DeliveryState {
  return {
    status: 'none',
    deliveryId: '',
    accountId: '',
    keyId: '',
    url: '',
    eventType: '',
    body: '',
    attempt: 0,
    firstStartedAt: null,
    nextAttemptAt: null,
    leaseUntil: null,
  };
}

export function evolve(state: DeliveryState, event: WebhookDeliveryEvent): DeliveryState {
  switch (event.type) {
    case 'WebhookDeliveryRequested': {
      const d = event.data;
      return {
        ...state,
        status: 'pending',
        deliveryId: d.deliveryId,
        accountId: d.accountId,
        keyId: d.keyId,
        url: d.url,
        eventType: d.eventType,
        body: d.body,
        nextAttemptAt: d.firstAttemptAt,
      };
    }
    case 'WebhookAttemptStarted':
      return {
        ...state,
        status: 'attempting',
        attempt: event.data.attempt,
        firstStartedAt: state.firstStartedAt ?? event.data.at,
        leaseUntil: event.data.leaseUntil,
        nextAttemptAt: null,
      };
    case 'WebhookAttemptFailed':
      return {
        ...state,
        status: event.data.nextAttemptAt === null ? 'attempting' : 'pending',
        nextAttemptAt: event.data.nextAttemptAt,
        leaseUntil: null,
      };
    case 'WebhookDelivered':
      return { ...state, status: 'delivered', leaseUntil: null, nextAttemptAt: null };
    case 'WebhookAbandoned':
      return { ...state, status: 'abandoned', leaseUntil: null, nextAttemptAt: null };
    default: {
      const _exhaustive: never = event;
      return _exhaustive;
    }
  }
}

export interface RequestDelivery {
  type: 'RequestDelivery';
  deliveryId: string;
  accountId: string;
  keyId: string;
  url: string;
  eventType: WebhookEventTypeName;
  eventId: string;
  body: string;
  source: string;
  now: Date;
}

/** Takes the next attempt when it is due, or the current one again when its taker's lease ran out. */
export interface ClaimAttempt {
  type: 'ClaimAttempt';
  now: Date;
  leaseMs: number;
}

export type AttemptOutcome =
  | { delivered: true; status: number }
  | { delivered: false; status: number | null; error: string | null };

export interface RecordAttempt {
  type: 'RecordAttempt';
  attempt: number;
  outcome: AttemptOutcome;
  now: Date;
}

export type DeliveryCommand = RequestDelivery | ClaimAttempt | RecordAttempt;

/**
 * Pure: time arrives in the command. A repeated request, a claim of work not due or already taken, and the
 * outcome of an attempt that is no longer the current one all decide nothing, so retries and racing instances
 * are harmless; the expected revision of the append settles which of two claims wins.
 */
export function decide(command: DeliveryCommand, state: DeliveryState): WebhookDeliveryEvent[] {
  switch (command.type) {
    case 'RequestDelivery': {
      if (state.status !== 'none') return [];
      const { type: _type, now, ...data } = command;
      return [{ type: 'WebhookDeliveryRequested', data: { ...data, firstAttemptAt: now.toISOString() } }];
    }
    case 'ClaimAttempt': {
      const now = command.now.getTime();
      const base = { deliveryId: state.deliveryId, accountId: state.accountId };
      const leaseUntil = new Date(now + command.leaseMs).toISOString();
      const at = command.now.toISOString();
      if (
        state.status === 'pending' &&
        state.nextAttemptAt !== null &&
        Date.parse(state.nextAttemptAt) <= now
      )
        return [
          { type: 'WebhookAttemptStarted', data: { ...base, attempt: state.attempt + 1, at, leaseUntil } },
        ];
      // The taker stopped before recording an outcome: the same attempt is sent again (at least once).
      if (state.status === 'attempting' && state.leaseUntil !== null && Date.parse(state.leaseUntil) <= now)
        return [{ type: 'WebhookAttemptStarted', data: { ...base, attempt: state.attempt, at, leaseUntil } }];
      return [];
    }
    case 'RecordAttempt': {
      if (state.status !== 'attempting' || state.leaseUntil === null || command.attempt !== state.attempt)
        return [];
      const base = { deliveryId: state.deliveryId, accountId: state.accountId, attempt: command.attempt };
      const at = command.now.toISOString();
      const { outcome } = command;
      if (outcome.delivered)
        return [{ type: 'WebhookDelivered', data: { ...base, at, status: outcome.status } }];
      const offset = ATTEMPT_OFFSETS_MS[command.attempt];
      const first = Date.parse(state.firstStartedAt ?? at);
      const failed = { ...base, at, status: outcome.status, error: outcome.error };
      if (offset === undefined) {
        return [
          { type: 'WebhookAttemptFailed', data: { ...failed, nextAttemptAt: null } },
          {
            type: 'WebhookAbandoned',
            data: { deliveryId: state.deliveryId, accountId: state.accountId, attempts: command.attempt, at },
          },
        ];
      }
      return [
        {
          type: 'WebhookAttemptFailed',
          data: { ...failed, nextAttemptAt: new Date(first + offset).toISOString() },
        },
      ];
    }
    default: {
      const _exhaustive: never = command;
      return _exhaustive;
    }
  }
}
