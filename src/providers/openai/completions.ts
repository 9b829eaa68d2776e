import type { ReportedUsage, Upstream } from '../../contracts/chat.ts';
import { UpstreamError } from '../errors.ts';
import { endpointUrl, postJson } from '../http.ts';
import { isDone, parseSse } from '../sse.ts';
import { readOpenAiUsage } from './usage.ts';

/** A legacy text completion or one of its stream chunks: `choices[].text`. */
export type TextCompletion = Record<string, unknown> & { choices: unknown[] };

export interface TextCompletionCall {
  /** The client's request; the gateway sets `max_tokens` to the limit it reserved for. */
  body: Record<string, unknown>;
  upstream: Upstream;
  maxTokens: number;
  signal: AbortSignal;
}

/** Fields only the gateway understands; never sent upstream. */
const GATEWAY_FIELDS = ['models', 'cache', 'webhook_url'] as const;

function request(call: TextCompletionCall, stream: boolean) {
  const body: Record<string, unknown> = {
    ...call.body,
    model: call.upstream.model,
    max_tokens: call.maxTokens,
  };
  for (const field of GATEWAY_FIELDS) delete body[field];
  if (stream) {
    body.stream = true;
    // Usage is what the request is billed on: always ask for it, whatever the client asked.
    body.stream_options = { ...(call.body.stream_options as object | undefined), include_usage: true };
  } else {
    delete body.stream;
    delete body.stream_options;
  }
  return {
    url: endpointUrl(call.upstream.baseUrl, '/completions'),
    headers: {
      authorization: `Bearer ${call.upstream.apiKey}`,
      ...(stream && { accept: 'text/event-stream' }),
    },
    body,
    timeoutMs: call.upstream.timeoutMs,
    signal: call.signal,
  };
}

/**
 * OpenAI's legacy completions (`POST /completions`), spoken natively for the instruct-era models that serve it:
 * the request goes up as it came (bar the model id and the output limit), the answer comes back as it is.
 */
export const openAiTextCompletions = {
  async complete(
    call: TextCompletionCall,
  ): Promise<{ completion: TextCompletion; usage: ReportedUsage | undefined }> {
    const response = await postJson(request(call, false));
    const completion = (await response.body.json()) as TextCompletion;
    if (!completion || !Array.isArray(completion.choices)) {
      throw new UpstreamError('server', 'the provider answered without choices');
    }
    return { completion, usage: readOpenAiUsage(completion.usage) };
  },

  async *stream(call: TextCompletionCall): AsyncIterable<{ chunk: TextCompletion; usage?: ReportedUsage }> {
    const response = await postJson(request(call, true));
    for await (const event of parseSse(response.body, { final: isDone })) {
      if (isDone(event)) return;
      let chunk: TextCompletion;
      try {
        chunk = JSON.parse(event.data) as TextCompletion;
      } catch {
        throw new UpstreamError('server', 'the provider sent a malformed stream chunk');
      }
      const failure = chunk.error as { message?: unknown } | undefined;
      if (failure) {
        throw new UpstreamError(
          'server',
          typeof failure.message === 'string' ? failure.message : 'stream failed',
        );
      }
      if (!Array.isArray(chunk.choices)) chunk.choices = [];
      const usage = readOpenAiUsage(chunk.usage);
      yield usage ? { chunk, usage } : { chunk };
    }
  },
};
