import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';

/** One call of a tool's HTTP twin: a `/v1` route of this gateway. */
export interface TwinRequest {
  method: 'GET' | 'POST';
  path: string;
  query?: Record<string, string | number | boolean | undefined>;
  body?: unknown;
  /** Sent as `X-GW-Tag`. */
  tag?: string;
}

export interface TwinAnswer {
  status: number;
  headers: Record<string, string | undefined>;
  /** The parsed body when it is JSON. */
  json: unknown;
  bytes: Buffer;
  /** The request's id in the request log. */
  requestId: string;
}

/** The twin's refusal (4xx, 5xx), for the agent as a tool error carrying the API's own message. */
export class TwinRefused extends Error {
  override readonly name = 'TwinRefused';
  constructor(
    readonly status: number,
    readonly body: unknown,
    message: string,
  ) {
    super(message);
  }
}

export type Twin = (request: TwinRequest) => Promise<TwinAnswer>;

/**
 * Requests that came through MCP carry this prefix in their `X-Request-Id`, so the request log tells them apart
 * (`client_request_id`); their id there is the gateway's own, as every request's.
 */
export const MCP_REQUEST_PREFIX = 'mcp-';

/**
 * Calls `/v1` in process with the caller's own credentials (Fastify's `inject`): authentication, rate limits,
 * holds, caps, charges, the request log and every refusal are the HTTP API's, because it is the HTTP API.
 */
export function twinOf(app: FastifyInstance, credentials: Record<string, string>): Twin {
  return async (request) => {
    const headers: Record<string, string> = {
      ...credentials,
      'x-request-id': `${MCP_REQUEST_PREFIX}${randomUUID()}`,
    };
    if (request.tag !== undefined) headers['x-gw-tag'] = request.tag;
    if (request.body !== undefined) headers['content-type'] = 'application/json';
    const query = Object.fromEntries(
      Object.entries(request.query ?? {})
        .filter(([, value]) => value !== undefined)
        .map(([name, value]) => [name, String(value)]),
    );
    const response = await app.inject({
      method: request.method,
      url: request.path,
      query,
      headers,
      ...(request.body !== undefined && { payload: JSON.stringify(request.body) }),
    });
    const answer: TwinAnswer = {
      status: response.statusCode,
      headers: Object.fromEntries(
        Object.entries(response.headers).map(([name, value]) => [
          name,
          Array.isArray(value) ? value.join(', ') : value === undefined ? undefined : String(value),
        ]),
      ),
      json: parseJson(response.headers['content-type'], response.body),
      bytes: response.rawPayload,
      requestId: String(response.headers['x-gw-request-id']),
    };
    if (answer.status >= 400) throw new TwinRefused(answer.status, answer.json, refusalText(answer));
    return answer;
  };
}

function parseJson(contentType: unknown, body: string): unknown {
  if (typeof contentType !== 'string' || !contentType.includes('json')) return undefined;
  try {
    return JSON.parse(body);
  } catch {
    return undefined;
  }
}

/** `HTTP 402 (insufficient_quota): <the API's message>`, and when to retry a 429 or 503. */
function refusalText(answer: TwinAnswer): string {
  const error = (answer.json as { error?: { message?: unknown; type?: unknown } } | undefined)?.error;
  const message =
    typeof error?.message === 'string' ? error.message : answer.bytes.toString('utf8').slice(0, 500);
  const type = typeof error?.type === 'string' ? ` (${error.type})` : '';
  const retry = answer.headers['retry-after'];
  return `HTTP ${answer.status}${type}: ${message}${retry ? ` (retry after ${retry} s)` : ''}`;
}
