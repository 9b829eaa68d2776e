import { z } from 'zod';

/**
 * Events of the `webhook-{deliveryId}` stream (one signed callback and every attempt to deliver it) and of the
 * `webhooksecret-{keyId}` stream (rotations of a key's signing secret). Every event names its account, so that
 * a one-account audit sees whole streams.
 */

/** The WebhookEvent types of the API (`type` of the body, header `x-gw-event-type`). */
export const WebhookEventType = z.enum([
  'job.completed',
  'job.failed',
  'balance.low',
  'balance.exhausted',
  'usage.threshold.exceeded',
  'usage.daily.summary',
  'subaccount.created',
  'subaccount.spend.exceeded',
  'model.added',
  'model.deprecated',
  'key.rotated',
  'eval.completed',
  'eval.failed',
  'provider.credential.out',
  'reconciliation.variance',
]);

const Instant = z.iso.datetime({ offset: true });

export const WebhookDeliveryRequested = z.object({
  deliveryId: z.string(),
  accountId: z.string(),
  /** The key whose secret signs every attempt (its generation at the time of each attempt). */
  keyId: z.string(),
  url: z.string(),
  eventType: WebhookEventType,
  /** The WebhookEvent's own `id` (`evt_…`). */
  eventId: z.string(),
  /** The exact body sent with every attempt: the WebhookEvent as JSON text. */
  body: z.string(),
  /** What the callback is about, e.g. `job:job_…` or `event:<event id>`; one delivery per source. */
  source: z.string(),
  /** When the first attempt is due. */
  firstAttemptAt: Instant,
});

/** An instance took attempt `attempt` and will POST it; another may take it again once `leaseUntil` passes. */
export const WebhookAttemptStarted = z.object({
  deliveryId: z.string(),
  accountId: z.string(),
  attempt: z.number().int().positive(),
  at: Instant,
  leaseUntil: Instant,
});

/** The attempt got no 2xx: `status` is the answer's status, or null with `error` when there was none. */
export const WebhookAttemptFailed = z.object({
  deliveryId: z.string(),
  accountId: z.string(),
  attempt: z.number().int().positive(),
  at: Instant,
  status: z.number().int().nullable(),
  error: z.string().nullable(),
  /** When the next attempt is due; null after the last one. */
  nextAttemptAt: Instant.nullable(),
});

export const WebhookDelivered = z.object({
  deliveryId: z.string(),
  accountId: z.string(),
  attempt: z.number().int().positive(),
  at: Instant,
  status: z.number().int(),
});

/** Every attempt failed; nothing more is sent. */
export const WebhookAbandoned = z.object({
  deliveryId: z.string(),
  accountId: z.string(),
  attempts: z.number().int().positive(),
  at: Instant,
});

/**
 * A key's signing secret moved to `generation` (the secret itself derives from the key id and the generation
 * and is never stored). Becomes the `key.rotated` webhook.
 */
export const WebhookSecretRotated = z.object({
  keyId: z.string(),
  accountId: z.string(),
  subAccountId: z.string().nullable(),
  generation: z.number().int().positive(),
});

export const webhookDeliveryEventSchemas = {
  WebhookDeliveryRequested,
  WebhookAttemptStarted,
  WebhookAttemptFailed,
  WebhookDelivered,
  WebhookAbandoned,
} as const;

export const webhookSecretEventSchemas = { WebhookSecretRotated } as const;

type Of<T extends keyof typeof webhookDeliveryEventSchemas> = {
  type: T;
  data: z.infer<(typeof webhookDeliveryEventSchemas)[T]>;
};
export type WebhookDeliveryEvent = {
  [T in keyof typeof webhookDeliveryEventSchemas]: Of<T>;
}[keyof typeof webhookDeliveryEventSchemas];
export type WebhookSecretEvent = {
  type: 'WebhookSecretRotated';
  data: z.infer<typeof WebhookSecretRotated>;
};
export type WebhookEventTypeName = z.infer<typeof WebhookEventType>;

export const webhookStream = (deliveryId: string) => `webhook-${deliveryId}`;
export const webhookSecretStream = (keyId: string) => `webhooksecret-${keyId}`;
