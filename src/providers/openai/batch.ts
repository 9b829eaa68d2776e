import { FormData } from 'undici';
import type { BatchApi, UpstreamBatchResult, UpstreamBatchState } from '../../contracts/batch.ts';
import type { ChatCompletion, Upstream } from '../../contracts/chat.ts';
import { UpstreamError } from '../errors.ts';
import { endpointUrl, postJson, sendUpstream } from '../http.ts';
import { toOpenAiRequest } from './request.ts';
import { readOpenAiUsage } from './usage.ts';

/** The metadata key an upstream batch carries the gateway's name for it under, so it can be found again. */
const TAG_KEY = 'gateway_batch';

const auth = (upstream: Upstream) => ({ authorization: `Bearer ${upstream.apiKey}` });

interface OpenAiBatch {
  id: string;
  status: string;
  output_file_id?: string | null;
  error_file_id?: string | null;
  errors?: { data?: { message?: string }[] } | null;
  metadata?: Record<string, string> | null;
}

async function json<T>(upstream: Upstream, path: string, signal: AbortSignal, body?: unknown): Promise<T> {
  const response = await postJson({
    method: body === undefined ? 'GET' : 'POST',
    url: endpointUrl(upstream.baseUrl, path),
    headers: auth(upstream),
    body,
    timeoutMs: upstream.timeoutMs,
    signal,
  });
  return (await response.body.json()) as T;
}

async function fileText(upstream: Upstream, fileId: string, signal: AbortSignal): Promise<string> {
  const response = await sendUpstream({
    method: 'GET',
    url: endpointUrl(upstream.baseUrl, `/files/${encodeURIComponent(fileId)}/content`),
    headers: auth(upstream),
    timeoutMs: upstream.timeoutMs,
    signal,
  });
  return response.body.text();
}

const STATES: Record<string, UpstreamBatchState['state']> = {
  completed: 'ended',
  expired: 'expired',
  cancelled: 'cancelled',
  failed: 'failed',
};

/** One line of OpenAI's batch output format, as the results need it. */
function readLine(text: string): UpstreamBatchResult | undefined {
  let line: {
    custom_id?: unknown;
    response?: { status_code?: number; body?: unknown } | null;
    error?: { message?: string } | null;
  };
  try {
    line = JSON.parse(text);
  } catch {
    return undefined;
  }
  // A line with no response was never run (expired, cancelled): it is not served, and the provider bills nothing.
  if (typeof line.custom_id !== 'string' || !line.response) return undefined;
  const key = line.custom_id;
  const status = line.response?.status_code ?? 500;
  const body = line.response?.body as (ChatCompletion & { error?: { message?: string } }) | undefined;
  if (status >= 200 && status < 300 && body && Array.isArray(body.choices)) {
    return { key, completion: body, usage: readOpenAiUsage(body.usage) };
  }
  const message = body?.error?.message ?? line.error?.message ?? `the provider answered ${status}`;
  return { key, error: { status, message } };
}

/**
 * OpenAI's Batch API: the lines go up as a JSONL file of purpose `batch` (Files API), a batch is created over it
 * for `/v1/chat/completions` with a 24 h window, polled, and its output and error files read back.
 */
export const openAiBatch: BatchApi = {
  async submit(upstream, lines, tag, signal) {
    const jsonl = lines
      .map((line) =>
        JSON.stringify({
          custom_id: line.key,
          method: 'POST',
          url: '/v1/chat/completions',
          body: toOpenAiRequest(line.body, upstream, false),
        }),
      )
      .join('\n');
    const form = new FormData();
    form.append('purpose', 'batch');
    form.append('file', new Blob([`${jsonl}\n`], { type: 'application/jsonl' }), `${tag}.jsonl`);
    const uploaded = await sendUpstream({
      method: 'POST',
      url: endpointUrl(upstream.baseUrl, '/files'),
      headers: auth(upstream),
      body: form,
      timeoutMs: upstream.timeoutMs,
      signal,
    });
    const file = (await uploaded.body.json()) as { id?: unknown };
    if (typeof file.id !== 'string') throw new UpstreamError('server', 'the provider kept no file id');
    const batch = await json<OpenAiBatch>(upstream, '/batches', signal, {
      input_file_id: file.id,
      endpoint: '/v1/chat/completions',
      completion_window: '24h',
      metadata: { [TAG_KEY]: tag },
    });
    if (typeof batch.id !== 'string') throw new UpstreamError('server', 'the provider returned no batch id');
    return batch.id;
  },

  async find(upstream, tag, signal) {
    // The newest batches come first; a submission whose id went unrecorded is among the latest.
    const page = await json<{ data?: OpenAiBatch[] }>(upstream, '/batches?limit=100', signal);
    return page.data?.find((batch) => batch.metadata?.[TAG_KEY] === tag)?.id;
  },

  async poll(upstream, id, signal) {
    const batch = await json<OpenAiBatch>(upstream, `/batches/${encodeURIComponent(id)}`, signal);
    const state = STATES[batch.status];
    if (state === 'failed') {
      const reason = batch.errors?.data
        ?.map((e) => e.message)
        .filter(Boolean)
        .join('; ');
      return { state, message: reason || 'the provider failed the batch' };
    }
    return state ? { state } : { state: 'running' };
  },

  async results(upstream, id, signal) {
    const batch = await json<OpenAiBatch>(upstream, `/batches/${encodeURIComponent(id)}`, signal);
    const results: UpstreamBatchResult[] = [];
    for (const fileId of [batch.output_file_id, batch.error_file_id]) {
      if (!fileId) continue;
      for (const text of (await fileText(upstream, fileId, signal)).split('\n')) {
        const result = text.trim() === '' ? undefined : readLine(text);
        if (result) results.push(result);
      }
    }
    return results;
  },

  async cancel(upstream, id, signal) {
    await json(upstream, `/batches/${encodeURIComponent(id)}/cancel`, signal, {});
  },
};
