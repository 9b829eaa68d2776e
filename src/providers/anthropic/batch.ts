import type { BatchApi, UpstreamBatchResult } from '../../contracts/batch.ts';
import type { Upstream } from '../../contracts/chat.ts';
import { UpstreamError } from '../errors.ts';
import { endpointUrl, postJson } from '../http.ts';
import { toAnthropicRequest } from './request.ts';
import { fromAnthropicMessage } from './response.ts';

const VERSION = '2023-06-01';

const headers = (upstream: Upstream) => ({ 'x-api-key': upstream.apiKey, 'anthropic-version': VERSION });

interface MessageBatch {
  id?: unknown;
  processing_status?: string;
  results_url?: string | null;
}

async function call<T>(upstream: Upstream, url: string, signal: AbortSignal, body?: unknown): Promise<T> {
  const response = await postJson({
    method: body === undefined ? 'GET' : 'POST',
    url,
    headers: headers(upstream),
    body,
    timeoutMs: upstream.timeoutMs,
    signal,
  });
  return (await response.body.json()) as T;
}

const batchUrl = (upstream: Upstream, id: string, tail = '') =>
  endpointUrl(upstream.baseUrl, `/v1/messages/batches/${encodeURIComponent(id)}${tail}`);

type Result =
  | { type: 'succeeded'; message: Parameters<typeof fromAnthropicMessage>[0] }
  | {
      type: 'errored';
      error?: { error?: { type?: string; message?: string }; type?: string; message?: string };
    }
  | { type: 'canceled' | 'expired' };

/** An errored request's status, from Anthropic's error type (invalid_request_error is the caller's fault). */
const STATUS: Record<string, number> = {
  invalid_request_error: 400,
  authentication_error: 401,
  permission_error: 403,
  not_found_error: 404,
  request_too_large: 413,
  rate_limit_error: 429,
  overloaded_error: 529,
};

/**
 * Anthropic's Message Batches (`/v1/messages/batches`): the requests go up in one create call, each as
 * `{custom_id, params}`; the batch is polled until `processing_status` is `ended`, and its results are read as
 * JSONL from `results_url`. Anthropic keeps no name for a batch, so a lost id cannot be looked up.
 */
export const anthropicBatch: BatchApi = {
  async submit(upstream, lines, _tag, signal) {
    const created = await call<MessageBatch>(
      upstream,
      endpointUrl(upstream.baseUrl, '/v1/messages/batches'),
      signal,
      {
        requests: lines.map((line) => ({
          custom_id: line.key,
          params: toAnthropicRequest(line.body, upstream, false),
        })),
      },
    );
    if (typeof created.id !== 'string')
      throw new UpstreamError('server', 'the provider returned no batch id');
    return created.id;
  },

  async poll(upstream, id, signal) {
    const batch = await call<MessageBatch>(upstream, batchUrl(upstream, id), signal);
    // An ended batch may hold succeeded, errored, canceled and expired requests alike: each is read from its result.
    return batch.processing_status === 'ended' ? { state: 'ended' } : { state: 'running' };
  },

  async results(upstream, id, signal) {
    const batch = await call<MessageBatch>(upstream, batchUrl(upstream, id), signal);
    const response = await postJson({
      method: 'GET',
      url: batch.results_url || batchUrl(upstream, id, '/results'),
      headers: headers(upstream),
      timeoutMs: upstream.timeoutMs,
      signal,
    });
    const results: UpstreamBatchResult[] = [];
    for (const text of (await response.body.text()).split('\n')) {
      if (text.trim() === '') continue;
      let line: { custom_id?: unknown; result?: Result };
      try {
        line = JSON.parse(text);
      } catch {
        continue;
      }
      if (typeof line.custom_id !== 'string' || !line.result) continue;
      const key = line.custom_id;
      const result = line.result;
      if (result.type === 'succeeded') results.push({ key, ...fromAnthropicMessage(result.message) });
      else if (result.type === 'errored') {
        const error = result.error?.error ?? result.error;
        results.push({
          key,
          error: {
            status: STATUS[error?.type ?? ''] ?? 500,
            message: error?.message ?? 'the request failed',
          },
        });
      }
    }
    return results;
  },

  async cancel(upstream, id, signal) {
    await call(upstream, batchUrl(upstream, id, '/cancel'), signal, {});
  },
};
