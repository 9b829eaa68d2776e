import { randomUUID } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';

/** A client's own request id is kept when it is printable ASCII, up to 200 characters (any other is ignored). */
const CLIENT_REQUEST_ID = /^[\x21-\x7e](?:[\x20-\x7e]{0,198}[\x21-\x7e])?$/;

/**
 * The gateway's own id of a request (Fastify's `request.id`): always made here. Holds, charges, the request log
 * and the gateway's internal work are keyed by it, and internal work derives its ids from the gateway's own
 * (`<batch id>-<line>`), so no id a client chooses can collide with, or stand for, one the gateway made.
 */
export const gatewayRequestId = (): string => randomUUID();

/** The `X-Request-Id` the client sent, when it is one the gateway keeps: its correlation id, never a key. */
export function clientRequestId(request: Pick<FastifyRequest, 'headers'>): string | undefined {
  const given = request.headers['x-request-id'];
  return typeof given === 'string' && CLIENT_REQUEST_ID.test(given) ? given : undefined;
}

/**
 * The ids a response carries: `X-Request-Id` echoes the client's own (the contract's correlation id), else it is
 * the gateway's; `X-Gw-Request-Id` is always the gateway's, the id of the request in its log and its charges.
 */
export function requestIdHeaders(request: FastifyRequest): Record<string, string> {
  return {
    'x-request-id': clientRequestId(request) ?? request.id,
    'x-gw-request-id': request.id,
  };
}

export function setRequestIdHeaders(request: FastifyRequest, reply: FastifyReply): void {
  reply.headers(requestIdHeaders(request));
}
