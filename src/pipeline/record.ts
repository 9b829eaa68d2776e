import type { RequestBodies } from '../billing/request-bodies.ts';
import { type RequestInfo, RequestLog } from '../billing/request-log.ts';
import type { CallContext } from './types.ts';

/**
 * A request's record, opened when it arrives (the HTTP edge) or when a worker starts work of its own (a batch's
 * line, an eval's call, the dashboard's replay): who asks, where, with what body. Everything else in it is
 * written by the pipeline's steps from what they return, and the record is turned into its event once, by the
 * settlement or, for a request that settled nothing, by `recordUnsettled`.
 */
export function openRecord(bodies: RequestBodies, info: RequestInfo): RequestLog {
  return new RequestLog(bodies, info);
}

/**
 * The call context of metered work. Its record, if it has one, becomes the pipeline's from here: it is written
 * when the request ends however it ends, under the request's tag, and with the routing decision made before the
 * pipeline was reached (an `eval:` alias) when there was one.
 */
export function meteredContext<C extends CallContext>(context: C, routing?: unknown): C {
  const log = context.log;
  if (log) {
    log.metered = true;
    log.tag = context.tag;
  }
  noteRouting(log, routing);
  return context;
}

/** The automatic router's decision as the record keeps it (`routing/record.ts`), when the request was routed. */
export function noteRouting(log: RequestLog | undefined, routing: unknown): void {
  if (log && routing !== undefined) log.routing = routing;
}
