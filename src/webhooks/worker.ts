import type pg from 'pg';
import type { AttemptOutcome } from '../../commands/webhook/delivery.ts';
import type { WebhookEventTypeName } from '../../events/webhook.ts';
import { signingKeyOf } from '../../projections/api-keys/index.ts';
import { dueDeliveries, pendingNotices } from '../../projections/webhook-deliveries/queries.ts';
import { guardedFetch, UrlRefused } from '../net/url-guard.ts';
import type { Webhooks } from './service.ts';
import { signatureHeader } from './signing.ts';

export interface WebhookWorkerOptions {
  pool: pg.Pool;
  webhooks: Webhooks;
  clock: () => Date;
  allowPrivate: boolean;
  log: (line: string) => void;
  /** How often due work is looked for (default 1 s). */
  intervalMs?: number;
  /** Limit of one attempt, from connecting to the last byte of the answer (default 10 s). */
  timeoutMs?: number;
  /** How long a claimed attempt is its taker's before another instance may take it again (default 60 s). */
  leaseMs?: number;
  /** Attempts in flight at once on this instance (default 16). */
  concurrency?: number;
}

/** Answers are read and dropped; past this many bytes the connection is cut instead. */
const ANSWER_BYTES_READ = 65_536;

/**
 * Turns lifecycle notices into deliveries and makes every due attempt. Each attempt is claimed by appending
 * WebhookAttemptStarted at the stream's expected revision before anything is sent, so of several instances
 * exactly one sends a given attempt; its outcome is appended after the answer. An instance that dies between
 * the two leaves the claim to run out (the lease), and the attempt is sent again: delivery is at least once,
 * and `x-gw-delivery-id` lets receivers drop repeats.
 */
export function startWebhookWorker(options: WebhookWorkerOptions): {
  stop(): Promise<void>;
  /** One pass now (tests, and a nudge after a request). */
  tick(): Promise<void>;
} {
  const { pool, webhooks, clock, log } = options;
  const intervalMs = options.intervalMs ?? 1000;
  const timeoutMs = options.timeoutMs ?? 10_000;
  const leaseMs = options.leaseMs ?? 60_000;
  const concurrency = options.concurrency ?? 16;
  const controller = new AbortController();
  const inFlight = new Map<string, Promise<void>>();

  const dispatch = async () => {
    for (const notice of await pendingNotices(pool, 100)) {
      const keyId = await signingKeyOf(pool, notice.account_id);
      if (!keyId) continue;
      await webhooks.request({
        accountId: notice.account_id,
        keyId,
        url: notice.url,
        type: notice.event_type as WebhookEventTypeName,
        data: notice.data,
        source: notice.source,
        occurredAt: notice.occurred_at,
      });
    }
  };

  const attempt = async (deliveryId: string) => {
    const claimedAt = clock();
    const claim = await webhooks.commands.delivery(
      deliveryId,
      { type: 'ClaimAttempt', now: claimedAt, leaseMs },
      claimedAt,
    );
    const started = claim.events.find((e) => e.type === 'WebhookAttemptStarted');
    if (started?.type !== 'WebhookAttemptStarted') return;
    const { state } = claim;
    const number = started.data.attempt;
    const { secret } = await webhooks.secrets.current(state.keyId);
    const outcome = await post(state.url, state.body, {
      'content-type': 'application/json',
      'user-agent': 'model-gateway-webhooks/1',
      'x-gw-signature': signatureHeader(secret, state.body, Math.floor(claimedAt.getTime() / 1000)),
      'x-gw-event-type': state.eventType,
      'x-gw-delivery-id': deliveryId,
      'x-gw-attempt': String(number),
    });
    const now = clock();
    await webhooks.commands.delivery(
      deliveryId,
      { type: 'RecordAttempt', attempt: number, outcome, now },
      now,
    );
  };

  const post = async (
    url: string,
    body: string,
    headers: Record<string, string>,
  ): Promise<AttemptOutcome> => {
    try {
      const answer = await guardedFetch(url, {
        method: 'POST',
        headers,
        body,
        timeoutMs,
        allowPrivate: options.allowPrivate,
        followRedirects: false,
      });
      await answer.body.dump({ limit: ANSWER_BYTES_READ }).catch(() => undefined);
      if (answer.status >= 200 && answer.status < 300) return { delivered: true, status: answer.status };
      const redirect = answer.status >= 300 && answer.status < 400 ? ' (redirects are not followed)' : '';
      return {
        delivered: false,
        status: answer.status,
        error: redirect ? `HTTP ${answer.status}${redirect}` : null,
      };
    } catch (error) {
      if (error instanceof UrlRefused)
        return { delivered: false, status: null, error: `refused: ${error.message}` };
      return { delivered: false, status: null, error: describeFailure(error) };
    }
  };

  const deliver = async () => {
    const free = concurrency - inFlight.size;
    if (free <= 0) return;
    for (const deliveryId of await dueDeliveries(pool, clock(), free + inFlight.size)) {
      if (inFlight.has(deliveryId) || inFlight.size >= concurrency) continue;
      const running = attempt(deliveryId)
        .catch((error) => log(`webhook ${deliveryId} attempt failed: ${String(error)}`))
        .finally(() => inFlight.delete(deliveryId));
      inFlight.set(deliveryId, running);
    }
  };

  const tick = async () => {
    await dispatch().catch((error) => log(`webhook dispatch failed: ${String(error)}`));
    await deliver().catch((error) => log(`webhook delivery failed: ${String(error)}`));
  };

  const loop = (async () => {
    while (!controller.signal.aborted) {
      await sleep(intervalMs, controller.signal);
      if (!controller.signal.aborted) await tick();
    }
  })();

  return {
    tick,
    async stop() {
      controller.abort();
      await loop;
      // Attempts under way finish (each is bounded by its timeout) and record their outcome.
      await Promise.allSettled([...inFlight.values()]);
    },
  };
}

function describeFailure(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  if (error.name === 'TimeoutError' || error.name === 'AbortError') return 'timed out';
  const code = (error as { code?: unknown }).code ?? (error.cause as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' ? `${code}: ${error.message}` : error.message;
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}
