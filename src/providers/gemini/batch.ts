import type { BatchApi, UpstreamBatchResult, UpstreamBatchState } from '../../contracts/batch.ts';
import type { Upstream } from '../../contracts/chat.ts';
import { UpstreamError } from '../errors.ts';
import { endpointUrl, postJson } from '../http.ts';
import { toGeminiRequest } from './request.ts';
import { fromGeminiResponse } from './response.ts';
import { googleRetryDelayMs } from './retry-info.ts';
import type { GeminiResponse } from './types.ts';

interface Operation {
  name?: unknown;
  done?: boolean;
  metadata?: { state?: string; displayName?: string };
  error?: { message?: string };
  response?: { inlinedResponses?: Inlined[] | { inlinedResponses?: Inlined[] } };
}

interface Inlined {
  response?: GeminiResponse;
  error?: { code?: number; message?: string };
  metadata?: { key?: unknown };
}

async function call(
  upstream: Upstream,
  path: string,
  signal: AbortSignal,
  body?: unknown,
): Promise<Operation> {
  const response = await postJson({
    method: body === undefined ? 'GET' : 'POST',
    url: endpointUrl(upstream.baseUrl, `/v1beta/${path}`),
    headers: { 'x-goog-api-key': upstream.apiKey },
    body,
    timeoutMs: upstream.timeoutMs,
    signal,
    retryAfterFromBody: googleRetryDelayMs,
  });
  return (await response.body.json()) as Operation;
}

/** `batches/123` as Google names it; the path keeps its slash. */
const resource = (id: string) => (id.startsWith('batches/') ? id : `batches/${encodeURIComponent(id)}`);

const STATES: Record<string, UpstreamBatchState['state']> = {
  BATCH_STATE_SUCCEEDED: 'ended',
  BATCH_STATE_FAILED: 'failed',
  BATCH_STATE_CANCELLED: 'cancelled',
  BATCH_STATE_EXPIRED: 'expired',
};

/**
 * Gemini's batch mode: the requests go inline in one `models/{model}:batchGenerateContent` call, each with its
 * key in `metadata`; the long-running operation `batches/{id}` is polled, and the responses come inline in it,
 * in the order of the requests. The gateway's name for the batch is its display name.
 */
export const geminiBatch: BatchApi = {
  async submit(upstream, lines, tag, signal) {
    const model = upstream.model.includes('/')
      ? upstream.model
      : `models/${encodeURIComponent(upstream.model)}`;
    const operation = await call(upstream, `${model}:batchGenerateContent`, signal, {
      batch: {
        display_name: tag,
        input_config: {
          requests: {
            requests: lines.map((line) => ({
              request: toGeminiRequest(line.body, upstream),
              metadata: { key: line.key },
            })),
          },
        },
      },
    });
    if (typeof operation.name !== 'string')
      throw new UpstreamError('server', 'the provider returned no batch name');
    return operation.name;
  },

  async find(upstream, tag, signal) {
    const page = (await call(upstream, 'batches?pageSize=100', signal)) as { operations?: Operation[] };
    const found = page.operations?.find((op) => op.metadata?.displayName === tag)?.name;
    return typeof found === 'string' ? found : undefined;
  },

  async poll(upstream, id, signal) {
    const operation = await call(upstream, resource(id), signal);
    const state = STATES[operation.metadata?.state ?? ''];
    if (state === 'failed')
      return { state, message: operation.error?.message ?? 'the provider failed the batch' };
    return state ? { state } : { state: 'running' };
  },

  async results(upstream, id, signal) {
    const operation = await call(upstream, resource(id), signal);
    const inlined = operation.response?.inlinedResponses;
    const list = Array.isArray(inlined) ? inlined : (inlined?.inlinedResponses ?? []);
    return list.flatMap((item, index): UpstreamBatchResult[] => {
      // Keys come back in metadata where the provider echoes it; otherwise the order of the requests holds.
      const key = typeof item.metadata?.key === 'string' ? item.metadata.key : String(index);
      if (item.response) return [{ key, ...fromGeminiResponse(item.response, upstream.model) }];
      if (item.error) {
        const status = item.error.code && item.error.code >= 400 ? item.error.code : 500;
        return [{ key, error: { status, message: item.error.message ?? 'the request failed' } }];
      }
      return [];
    });
  },

  async cancel(upstream, id, signal) {
    await call(upstream, `${resource(id)}:cancel`, signal, {});
  },
};
