import type { ChatAdapter, ChatCall } from '../../contracts/chat.ts';
import { UpstreamError } from '../errors.ts';
import { endpointUrl, postJson, type UpstreamRequest } from '../http.ts';
import { parseSse } from '../sse.ts';
import { toGeminiRequest } from './request.ts';
import { fromGeminiResponse } from './response.ts';
import { googleRetryDelayMs } from './retry-info.ts';
import { fromGeminiStream } from './stream.ts';
import type { GeminiResponse } from './types.ts';

type Method = 'generateContent' | 'streamGenerateContent?alt=sse';

/**
 * The base URL has no version path (as GOOGLE_BASE_URL in Google's SDKs). A bare model id lives under
 * `models/`; a qualified one (`tunedModels/...`) is taken as it is.
 */
function upstreamRequest(call: ChatCall, method: Method): UpstreamRequest {
  const { baseUrl, model, apiKey, timeoutMs } = call.upstream;
  const resource = model.includes('/') ? model : `models/${encodeURIComponent(model)}`;
  return {
    url: endpointUrl(baseUrl, `/v1beta/${resource}:${method}`),
    headers: { 'x-goog-api-key': apiKey },
    body: toGeminiRequest(call.body, call.upstream),
    timeoutMs,
    signal: call.signal,
    retryAfterFromBody: googleRetryDelayMs,
  };
}

async function* events(body: AsyncIterable<Uint8Array>): AsyncIterable<GeminiResponse> {
  for await (const event of parseSse(body))
    yield parse(event.data, 'the provider sent a malformed stream chunk');
}

function parse(text: string, failure: string): GeminiResponse {
  let reply: unknown;
  try {
    reply = JSON.parse(text);
  } catch {
    throw new UpstreamError('server', failure);
  }
  if (typeof reply !== 'object' || reply === null) throw new UpstreamError('server', failure);
  return reply as GeminiResponse;
}

/** Google's Generative Language API (`generateContent`, `streamGenerateContent`). */
export const geminiChat: ChatAdapter = {
  async complete(call) {
    const response = await postJson(upstreamRequest(call, 'generateContent'));
    const reply = parse(await response.body.text(), 'the provider answered something other than a response');
    return fromGeminiResponse(reply, call.upstream.model);
  },

  async *stream(call) {
    const response = await postJson(upstreamRequest(call, 'streamGenerateContent?alt=sse'));
    yield* fromGeminiStream(events(response.body), call.upstream.model);
  },
};
