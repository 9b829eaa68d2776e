import type { FastifyReply } from 'fastify';
import type { Probe } from '../cache/cache.ts';
import type { HitCharge } from '../cache/charge.ts';
import type { Catalog } from '../catalog/types.ts';
import type { Outcome } from '../pipeline/types.ts';
import { openEventStream } from './event-stream.ts';
import type { SseEncoder } from './served.ts';

/** X-Cache-Status and RFC 9211's Cache-Status: what the response cache did for this answer. */
export function cacheHeaders(probe: Probe | undefined): Record<string, string> {
  if (!probe) return { 'x-cache-status': 'skip', 'cache-status': 'gateway; fwd=bypass' };
  return { 'x-cache-status': probe.status, 'cache-status': probe.cacheStatus };
}

/** A hit as the served headers and stream ends take an outcome: the stored answer's model, the hit's charge. */
export function hitOutcome(catalog: Catalog, probe: Probe, charge: HitCharge | undefined): Outcome {
  const entry = probe.hit?.entry;
  const model = entry && catalog.get(entry.model);
  if (!entry || !model || !charge) throw new Error('a cache hit without its entry, model or charge');
  return {
    model,
    // What the requester was charged: a sub-account's price of the hit.
    costNanos: charge.billedNanos,
    // Nothing upstream was waited for.
    latencyMs: 0,
    usageReported: entry.charge.usageReported,
    units: entry.charge.units,
    charge,
    ...(entry.answer.kind === 'chat' && { usage: entry.answer.usage }),
  };
}

/**
 * A stored answer replayed as a stream, through the endpoint's own encoder: the same chunks (or Anthropic events)
 * a provider's stream would make, ending as a served stream ends. The hit is charged before the first byte.
 */
export async function replaySse<I>(
  reply: FastifyReply,
  outcome: Outcome,
  items: I[],
  encoder: SseEncoder<I>,
): Promise<void> {
  const out = openEventStream(reply, outcome);
  for (const item of items) {
    if (out.gone()) return;
    await out.write(await encoder.item(item));
  }
  out.end(await encoder.end(outcome));
}

/**
 * An encoder that also shows each item to a recorder and, once the stream has ended well (not failed, not left by
 * its client), runs `ended` before the end is written: how a streamed answer reaches the cache.
 */
export function recording<I>(
  encoder: SseEncoder<I>,
  recorder: { observe(item: I): void },
  ended: (outcome: Outcome) => Promise<void>,
): SseEncoder<I> {
  return {
    item(item) {
      recorder.observe(item);
      return encoder.item(item);
    },
    async end(outcome) {
      await ended(outcome);
      return encoder.end(outcome);
    },
    fail: (failure) => encoder.fail(failure),
  };
}
