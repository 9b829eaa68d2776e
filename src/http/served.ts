import type { FastifyReply, FastifyRequest } from 'fastify';
import type { LiveAccounts } from '../accounts/live-state.ts';
import { isValidTag, requestTag } from '../chat/request.ts';
import { RequestRefused } from '../contracts/errors.ts';
import { outcomeHeaders } from '../pipeline/headers.ts';
import { meteredContext } from '../pipeline/record.ts';
import type { MeteredStream } from '../pipeline/stream.ts';
import type { CallContext, Outcome } from '../pipeline/types.ts';
import { openEventStream } from './event-stream.ts';

/**
 * The one preamble of a metered route: who is asking, under which cost tag (the header's, else the sub-account's
 * default), and a signal that fires when the client goes away, which stops the upstream call too.
 */
export function callContext(request: FastifyRequest, reply: FastifyReply, live: LiveAccounts): CallContext {
  const tagHeader = request.headers['x-gw-tag'];
  if (!isValidTag(tagHeader)) {
    throw new RequestRefused('invalid', "'x-gw-tag': 1 to 128 printable characters");
  }
  const fitOutput = fitOutputHeader(request.headers['x-gw-fit-output']);
  const sub = request.auth.subAccountId ? live.subAccount(request.auth.subAccountId) : undefined;
  const gone = new AbortController();
  reply.raw.on('close', () => {
    if (!reply.raw.writableFinished) gone.abort();
  });
  const tag = requestTag(tagHeader, sub?.defaultTag ?? null);
  const log = request.requestLog;
  const context: CallContext = {
    auth: request.auth,
    requestId: request.id,
    tag,
    signal: gone.signal,
    ...(log && { log }),
    ...(fitOutput && { fitOutput }),
    ...(request.headers['x-routing'] !== undefined && { routing: request.headers['x-routing'] }),
    ...(request.tokenLimit && { tokenLimit: request.tokenLimit }),
    onRouted: (headers) => {
      reply.headers(headers);
    },
  };
  return meteredContext(context, request.routedBefore);
}

/** `x-gw-fit-output`: `true` or `false` in any case; absent is `false`. Anything else is refused, not guessed at. */
function fitOutputHeader(header: string | string[] | undefined): boolean {
  if (header === undefined) return false;
  const value = (Array.isArray(header) ? header[0] : header)?.trim().toLowerCase();
  if (value === 'true') return true;
  if (value === 'false') return false;
  throw new RequestRefused('invalid', "'x-gw-fit-output': true or false");
}

/** The served call's headers on a plain (not streamed) answer. */
export function servedHeaders(reply: FastifyReply, outcome: Outcome): void {
  reply.headers(outcomeHeaders(outcome));
}

/** How a relay writes one metered stream's items, its successful end, and a failure (upstream or settlement). */
export interface SseEncoder<I> {
  item(item: I): string | Promise<string>;
  end(outcome: Outcome): string | Promise<string>;
  fail(failure: unknown): string;
}

/**
 * The one SSE relay: the stream's items written as they arrive (waiting for a slow client), then, once the
 * pipeline has settled the stream, its end, or the failure when the provider failed mid-stream or the charge
 * could not be made durable. A client that goes away stops the relay; what passed is billed.
 */
export async function relaySse<I>(
  reply: FastifyReply,
  stream: MeteredStream<I>,
  encoder: SseEncoder<I>,
): Promise<void> {
  const out = openEventStream(reply, stream);
  let first = true;
  for await (const item of stream) {
    if (!first && out.gone()) break;
    first = false;
    await out.write(await encoder.item(item));
  }
  const settled = await stream.settled();
  if (settled.unsettled) {
    const { error, holdId } = settled.unsettled;
    reply.log.error({ err: error, holdId }, 'settling a streamed request failed');
  }
  if (out.gone()) return;
  if (settled.failure !== undefined || !settled.outcome) out.end(encoder.fail(settled.failure));
  else out.end(await encoder.end(settled.outcome));
}
