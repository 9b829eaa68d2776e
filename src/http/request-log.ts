import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { RequestBodies } from '../billing/request-bodies.ts';
import type { RequestLog } from '../billing/request-log.ts';
import type { Spending } from '../billing/spending.ts';
import { openRecord } from '../pipeline/record.ts';
import { recordUnsettled, type UnsettledEnd } from '../pipeline/unsettled.ts';
import { describeError } from './errors.ts';
import { clientRequestId } from './request-id.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** The request log's record; `callContext` marks it metered when the request reaches the pipeline. */
    requestLog?: RequestLog;
    /** The error the request was answered with, as the client read it, for its record. */
    answeredError?: UnsettledEnd['error'];
  }
}

function newLog(request: FastifyRequest, bodies: RequestBodies): RequestLog {
  const client = clientRequestId(request);
  return openRecord(bodies, {
    requestId: request.id,
    ...(client !== undefined && { clientRequestId: client }),
    auth: request.auth,
    endpoint: request.routeOptions.url ?? request.url.split('?')[0] ?? request.url,
    body: request.body,
  });
}

/**
 * The request log at the edge: every authenticated request gets a record; one that reached the pipeline and settled
 * nothing (refused: 402, 404 model_not_found, a provider's failure) or was rate limited is written by the pipeline
 * (pipeline/unsettled.ts) when its answer has gone, with the status the client got and the error as it was
 * answered.
 */
export function requestLogHooks(app: FastifyInstance, bodies: RequestBodies, spending: Spending): void {
  app.addHook('preHandler', async (request) => {
    // A realtime stream is a GET upgraded to a WebSocket; its record is settled with the stream's last slice.
    const logged = request.method === 'POST' || request.headers.upgrade?.toLowerCase() === 'websocket';
    if (request.auth && logged) request.requestLog ??= newLog(request, bodies);
  });
  app.addHook('onError', async (request, _reply, error) => {
    if (!request.auth) return;
    request.requestLog ??= newLog(request, bodies);
    const { type, message } = describeError(error).body.error;
    request.answeredError = { type, message };
  });
  app.addHook('onResponse', async (request, reply) => {
    const log = request.requestLog;
    if (!log || log.finished) return;
    if (!log.metered && reply.statusCode !== 429) return;
    // Not awaited: the client has its answer; the record joins the budget stream's next append.
    const end = { status: reply.statusCode, error: request.answeredError };
    void recordUnsettled(spending, log, end, (error) => {
      request.log.error({ err: error }, 'logging a refused request failed');
    });
  });
}
