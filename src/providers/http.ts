import { Agent, errors, request } from 'undici';
import { failureOf, parseRetryAfter, UpstreamError } from './errors.ts';

/** A provider endpoint under a base URL, whether or not the configured base ends in a slash. */
export function endpointUrl(baseUrl: string, path: string): string {
  return `${baseUrl.replace(/\/+$/, '')}${path}`;
}

/** One pool of keep-alive connections per upstream origin, shared by every request. */
const agent = new Agent({ keepAliveTimeout: 30_000, connections: 256, pipelining: 1 });

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

/**
 * POSTs JSON upstream. A non-2xx answer becomes an UpstreamError carrying the provider's own message; the
 * timeout covers the wait for the response headers (a slow first byte), not a long stream after them.
 */
export async function postJson(req: UpstreamRequest): Promise<UpstreamResponse> {
  let response: Awaited<ReturnType<typeof request>>;
  try {
    const method = req.method ?? 'POST';
    response = await request(req.url, {
      method,
      dispatcher: agent,
      headers: method === 'POST' ? { 'content-type': 'application/json', ...req.headers } : req.headers,
      body: method === 'POST' ? JSON.stringify(req.body) : undefined,
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
    providerMessage(text) ?? `the provider answered ${response.statusCode}`,
    response.statusCode,
    parseRetryAfter(response.headers['retry-after']) ?? req.retryAfterFromBody?.(text),
  );
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
