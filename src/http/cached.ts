import type { FastifyReply } from 'fastify';
import type { MeteredStream } from '../pipeline/stream.ts';
import type { Outcome } from '../pipeline/types.ts';
import { openEventStream } from './event-stream.ts';
import { relaySse, type SseEncoder } from './served.ts';

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
 * A served stream, relayed once the cache step has said how to keep its answer: each item is also shown to a
 * recorder and, once the stream has ended well (not failed, not left by its client), the answer is kept before the
 * end is written, so that the next identical request finds it.
 */
export function relayRecorded<I, K>(
  reply: FastifyReply,
  stream: MeteredStream<I>,
  encoder: SseEncoder<I>,
  recorder: { observe(item: I): void; choicesToStore(): K | undefined },
): (keep: (outcome: Outcome, answer: K | undefined) => Promise<void>) => Promise<void> {
  return (keep) =>
    relaySse(reply, stream, {
      item(item) {
        recorder.observe(item);
        return encoder.item(item);
      },
      async end(outcome) {
        await keep(outcome, recorder.choicesToStore());
        return encoder.end(outcome);
      },
      fail: (failure) => encoder.fail(failure),
    });
}
