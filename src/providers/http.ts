import type { Readable } from 'node:stream';
import { Agent, type Dispatcher, errors, type FormData, request } from 'undici';
import { upstreamSeconds } from '../observability/metrics.ts';
import { inClientSpan } from '../observability/tracing.ts';
import { failureOf, parseRetryAfter, UpstreamError } from './errors.ts';

/** A provider endpoint under a base URL, whether or not the configured base ends in a slash. */
export function endpointUrl(baseUrl: string, path: string): string {
  return `${baseUrl.replace(/\/+$/, '')}${path}`;
}

/** One pool of keep-alive connections per upstream origin, shared by every request. */
const agent = new Agent({ keepAliveTimeout: 30_000, connections: 256, pipelining: 1 });

/** Keep-alive connections for media uploads and downloads, apart from the JSON pool so long transfers do not crowd it. */
export const mediaAgent = new Agent({ keepAliveTimeout: 30_000, connections: 64, pipelining: 1 });

export interface UpstreamRequest {
  /** POST unless said; a GET or DELETE sends no body. */
  method?: 'GET' | 'POST' | 'DELETE';
  url: string;
  headers: Record<string, string>;
  body?: unknown;
  timeoutMs: number;
  signal: AbortSignal;
  /** A retry delay read from the error body, for providers that send no Retry-After (Google's RetryInfo). */
  retryAfterFromBody?: (text: string) => number | undefined;
}

export interface UpstreamResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: AsyncIterable<Uint8Array> & { json(): Promise<unknown>; text(): Promise<string> };
}

/** What every upstream call sends; the helpers below fill it for JSON, multipart and byte-stream bodies. */
export interface RawUpstreamRequest {
  method: 'GET' | 'POST' | 'DELETE';
  url: string;
  headers: Record<string, string>;
  body?: string | FormData | Readable;
  timeoutMs: number;
  signal: AbortSignal;
  /** The connection pool; the JSON one unless said (media transfers have their own). */
  dispatcher?: Dispatcher;
  /** The provider's own message inside an error body, tried before the common formats. */
  errorMessage?: (text: string) => string | undefined;
  /** A retry delay read from the error body, for providers that send no Retry-After (Google's RetryInfo). */
  retryAfterFromBody?: (text: string) => number | undefined;
}

/**
 * One upstream call. A non-2xx answer becomes an UpstreamError carrying the provider's own message; the timeout
 * covers the wait for the response headers (a slow first byte), not a long body after them.
 */
export async function sendUpstream(req: RawUpstreamRequest): Promise<UpstreamResponse> {
  const url = new URL(req.url);
  const started = performance.now();
  let status = 'error';
  try {
    // The span and the timing cover the wait for the response headers; a streamed body comes after.
    return await inClientSpan(
      `${req.method} ${url.host}`,
      { 'http.request.method': req.method, 'server.address': url.host, 'url.path': url.pathname },
      async (span) => {
        const response = await callUpstream(req).catch((error: unknown) => {
          if (error instanceof UpstreamError && error.status) status = String(error.status);
          throw error;
        });
        status = String(response.status);
        span.setAttribute('http.response.status_code', response.status);
        return response;
      },
    );
  } finally {
    upstreamSeconds.observe({ host: url.host, status }, (performance.now() - started) / 1000);
  }
}

async function callUpstream(req: RawUpstreamRequest): Promise<UpstreamResponse> {
  let response: Awaited<ReturnType<typeof request>>;
  try {
    response = await request(req.url, {
      method: req.method,
      dispatcher: req.dispatcher ?? agent,
      headers: req.headers,
      body: req.body,
      headersTimeout: req.timeoutMs,
      bodyTimeout: Math.max(req.timeoutMs, 300_000),
      signal: req.signal,
    });
  } catch (error) {
    if (error instanceof errors.HeadersTimeoutError) {
      throw new UpstreamError('timeout', `the provider did not answer within ${req.timeoutMs} ms`);
    }
    if (req.signal.aborted) throw error;
    throw new UpstreamError('network', `could not reach the provider: ${(error as Error).message}`);
  }
  if (response.statusCode >= 200 && response.statusCode < 300) {
    return { status: response.statusCode, headers: response.headers, body: response.body };
  }
  const text = await response.body.text().catch(() => '');
  throw new UpstreamError(
    failureOf(response.statusCode),
    req.errorMessage?.(text) ?? providerMessage(text) ?? `the provider answered ${response.statusCode}`,
    response.statusCode,
    parseRetryAfter(response.headers['retry-after']) ?? req.retryAfterFromBody?.(text),
    providerCode(text),
  );
}

/** The code (OpenAI's `error.code`) or type (Anthropic's `error.type`) of a common error body, if any. */
function providerCode(text: string): string | undefined {
  try {
    const error = (JSON.parse(text) as { error?: { code?: unknown; type?: unknown } }).error;
    if (typeof error?.code === 'string') return error.code;
    if (typeof error?.type === 'string') return error.type;
  } catch {
    // not JSON
  }
  return undefined;
}

/** POSTs JSON upstream (or GETs / DELETEs, with no body), through sendUpstream. */
export function postJson(req: UpstreamRequest): Promise<UpstreamResponse> {
  const method = req.method ?? 'POST';
  return sendUpstream({
    method,
    url: req.url,
    headers: method === 'POST' ? { 'content-type': 'application/json', ...req.headers } : req.headers,
    body: method === 'POST' ? JSON.stringify(req.body) : undefined,
    timeoutMs: req.timeoutMs,
    signal: req.signal,
    retryAfterFromBody: req.retryAfterFromBody,
  });
}

/** The message inside the error bodies of the common formats ({error:{message}}, {message}, {error:"..."}). */
function providerMessage(text: string): string | undefined {
  try {
    const body = JSON.parse(text) as { error?: { message?: unknown } | string; message?: unknown };
    if (typeof body.error === 'string') return body.error;
    if (typeof body.error?.message === 'string') return body.error.message;
    if (typeof body.message === 'string') return body.message;
  } catch {
    // not JSON
  }
  return text.trim().slice(0, 500) || undefined;
}

/** GETs from a provider (a job's status, a result's bytes), with the same error mapping as postJson. */
export function getUpstream(req: Omit<UpstreamRequest, 'method' | 'body'>): Promise<UpstreamResponse> {
  return postJson({ ...req, method: 'GET' });
}
