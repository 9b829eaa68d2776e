import type { ChatAdapter, ChatChunk, ChatCompletion, Upstream } from '../../contracts/chat.ts';
import { UpstreamError } from '../errors.ts';
import { endpointUrl, postJson } from '../http.ts';
import { isDone, parseSse } from '../sse.ts';
import { toOpenAiRequest } from './request.ts';
import { readOpenAiUsage } from './usage.ts';

function endpoint(upstream: Upstream) {
  return {
    url: endpointUrl(upstream.baseUrl, '/chat/completions'),
    headers: { authorization: `Bearer ${upstream.apiKey}` },
  };
}

/**
 * Providers name reasoning output differently (`reasoning_content` in DeepSeek's format, `reasoning` in
 * others'); clients get `reasoning_content` whichever it was.
 */
function normalizeReasoning(holder: unknown): void {
  if (!holder || typeof holder !== 'object') return;
  const h = holder as Record<string, unknown>;
  if (typeof h.reasoning === 'string' && h.reasoning_content === undefined) {
    h.reasoning_content = h.reasoning;
    delete h.reasoning;
  }
}

/**
 * OpenAI's answer always has a choice's `logprobs` and its message's `refusal`, null when there is nothing to say;
 * compatible providers (Groq, Mistral, ...) leave them out, and clients typed on OpenAI's reference expect them.
 */
function completeChoice(choice: unknown): void {
  if (!choice || typeof choice !== 'object') return;
  const c = choice as Record<string, unknown>;
  c.logprobs ??= null;
  if (c.message && typeof c.message === 'object') (c.message as Record<string, unknown>).refusal ??= null;
}

/** Any provider that speaks the chat-completions format (OpenAI, Groq, Together, DeepSeek, Mistral, xAI, ...). */
export const openAiChat: ChatAdapter = {
  async complete(call) {
    const { url, headers } = endpoint(call.upstream);
    const response = await postJson({
      url,
      headers,
      body: toOpenAiRequest(call.body, call.upstream, false),
      timeoutMs: call.upstream.timeoutMs,
      signal: call.signal,
    });
    const completion = (await response.body.json()) as ChatCompletion;
    if (!completion || !Array.isArray(completion.choices)) {
      throw new UpstreamError('server', 'the provider answered without choices');
    }
    for (const choice of completion.choices) {
      normalizeReasoning((choice as { message?: unknown }).message);
      completeChoice(choice);
    }
    return { completion, usage: readOpenAiUsage(completion.usage) };
  },

  async *stream(call) {
    const { url, headers } = endpoint(call.upstream);
    const response = await postJson({
      url,
      headers: { ...headers, accept: 'text/event-stream' },
      body: toOpenAiRequest(call.body, call.upstream, true),
      timeoutMs: call.upstream.timeoutMs,
      signal: call.signal,
    });
    for await (const event of parseSse(response.body, { final: isDone })) {
      if (isDone(event)) return;
      let chunk: ChatChunk;
      try {
        chunk = JSON.parse(event.data) as ChatChunk;
      } catch {
        throw new UpstreamError('server', 'the provider sent a malformed stream chunk');
      }
      const failure = chunk.error as { message?: unknown } | undefined;
      if (failure) {
        // A provider that fails mid-stream says so in a chunk of its own.
        throw new UpstreamError(
          'server',
          typeof failure.message === 'string' ? failure.message : 'stream failed',
        );
      }
      for (const choice of chunk.choices ?? []) normalizeReasoning((choice as { delta?: unknown }).delta);
      yield { chunk, usage: readOpenAiUsage(chunk.usage) };
    }
  },
};
