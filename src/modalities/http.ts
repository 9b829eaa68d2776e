import type { FastifyReply, FastifyRequest } from 'fastify';
import type { LiveAccounts } from '../accounts/live-state.ts';
import { nanosToCents } from '../billing/charge.ts';
import { isValidTag, requestTag } from '../chat/request.ts';
import { RequestRefused } from '../contracts/errors.ts';
import type { RequestContext, Served } from './dispatch.ts';

/** Who is asking, under which cost tag, and a signal that fires when the client goes away (as on the chat route). */
export function requestContext(
  request: FastifyRequest,
  reply: FastifyReply,
  live: LiveAccounts,
): RequestContext {
  const tagHeader = request.headers['x-gw-tag'];
  if (!isValidTag(tagHeader)) {
    throw new RequestRefused('invalid', "'x-gw-tag': 1 to 128 printable characters");
  }
  const sub = request.auth.subAccountId ? live.subAccount(request.auth.subAccountId) : undefined;
  const gone = new AbortController();
  reply.raw.on('close', () => {
    if (!reply.raw.writableFinished) gone.abort();
  });
  return {
    auth: request.auth,
    requestId: request.id,
    tag: requestTag(tagHeader, sub?.defaultTag ?? null),
    signal: gone.signal,
  };
}

/** The headers every served model call carries: which model and upstream served it, how long it took, its cost. */
export function servedHeaders<R>(reply: FastifyReply, served: Served<R>): void {
  reply
    .header('x-model', served.model.id)
    .header('x-provider', served.model.provider)
    .header('x-latency-ms', String(served.latencyMs))
    .header('x-cost-cents', String(nanosToCents(served.costNanos)));
}
