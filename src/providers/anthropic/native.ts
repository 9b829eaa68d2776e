import type { ReportedUsage, Upstream } from '../../contracts/chat.ts';
import type {
  NativeCall,
  NativeMessagesAdapter,
  NativeStreamUsage,
  SseEvent,
} from '../../contracts/messages.ts';
import { endpointUrl, postJson } from '../http.ts';
import { parseSse } from '../sse.ts';
import { type AnthropicUsage, readAnthropicUsage } from './response.ts';

const VERSION = '2023-06-01';

/** Fields of the gateway's, not Anthropic's: fallbacks and the response cache's mode. */
const GATEWAY_FIELDS = ['models', 'cache'] as const;

function nativeRequest(
  original: Record<string, unknown>,
  upstream: Upstream,
  maxTokens: number,
  stream: boolean,
) {
  const body: Record<string, unknown> = { ...original, model: upstream.model, max_tokens: maxTokens, stream };
  for (const field of GATEWAY_FIELDS) delete body[field];
  return {
    url: endpointUrl(upstream.baseUrl, '/v1/messages'),
    headers: { 'x-api-key': upstream.apiKey, 'anthropic-version': VERSION },
    body,
    timeoutMs: upstream.timeoutMs,
  };
}

/**
 * Anthropic's Messages API spoken natively: the request goes upstream as it came (bar the model id and the output
 * limit the gateway reserved for), and the answer or the event stream comes back untranslated.
 */
export const anthropicMessages: NativeMessagesAdapter = {
  async complete(call: NativeCall) {
    const response = await postJson({
      ...nativeRequest(call.body, call.upstream, call.maxTokens, false),
      signal: call.signal,
    });
    const message = (await response.body.json()) as Record<string, unknown>;
    return { message, usage: readAnthropicUsage(message.usage as AnthropicUsage | undefined) };
  },
  async stream(call: NativeCall) {
    const request = nativeRequest(call.body, call.upstream, call.maxTokens, true);
    const response = await postJson({
      ...request,
      headers: { ...request.headers, accept: 'text/event-stream' },
      signal: call.signal,
    });
    const rest = parseSse(response.body)[Symbol.asyncIterator]();
    const first = await rest.next();
    if (first.done) throw new Error('the provider closed the stream without an event');
    return { first: first.value, rest };
  },
  streamUsage: () => new NativeUsage(),
  text: nativeText,
};

/**
 * Follows Anthropic's cumulative usage through a stream: `message_start` carries the input side, each
 * `message_delta` the output so far.
 */
class NativeUsage implements NativeStreamUsage {
  private usage: AnthropicUsage = {};
  private finished = false;
  produced = '';

  observe(event: SseEvent): void {
    let data: {
      type?: string;
      message?: { usage?: AnthropicUsage };
      usage?: AnthropicUsage;
      delta?: { type?: string; text?: string };
    };
    try {
      data = JSON.parse(event.data);
    } catch {
      return;
    }
    if (data.type === 'message_start') this.usage = { ...data.message?.usage };
    if (data.type === 'message_delta') this.usage = { ...this.usage, ...data.usage };
    if (data.type === 'message_stop') this.finished = true;
    if (data.type === 'content_block_delta' && data.delta?.type === 'text_delta')
      this.produced += data.delta.text ?? '';
  }

  /** The provider's figures once the stream finished; before that they are partial, and the gateway estimates. */
  reported(): ReportedUsage | undefined {
    return this.finished ? readAnthropicUsage(this.usage) : undefined;
  }
}

/** The text of a Messages answer, for an estimate when the provider reported no usage. */
function nativeText(message: Record<string, unknown>): string {
  const content = Array.isArray(message.content) ? message.content : [];
  return content
    .map((block) => {
      const b = block as { type?: string; text?: string; thinking?: string; input?: unknown };
      if (b.type === 'text') return b.text ?? '';
      if (b.type === 'thinking') return b.thinking ?? '';
      if (b.type === 'tool_use') return JSON.stringify(b.input ?? {});
      return '';
    })
    .join('');
}
