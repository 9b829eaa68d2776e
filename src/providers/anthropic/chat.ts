import type { ChatAdapter, ChatChunk, ReportedUsage, Upstream } from '../../contracts/chat.ts';
import { UpstreamError } from '../errors.ts';
import { endpointUrl, postJson } from '../http.ts';
import { parseSse } from '../sse.ts';
import { toAnthropicRequest } from './request.ts';
import { FINISH_REASON, fromAnthropicMessage, readAnthropicUsage, usageObject } from './response.ts';

const VERSION = '2023-06-01';

/** The fields of Anthropic's stream events that the translation reads. */
interface StreamEvent {
  type: string;
  index: number;
  message?: { id?: string; model?: string; usage?: Record<string, number | null> };
  content_block?: { type?: string; id?: string; name?: string };
  delta?: { type?: string; text?: string; thinking?: string; partial_json?: string; stop_reason?: string };
  usage?: Record<string, number | null>;
  error?: { type?: string; message?: string };
}

function endpoint(upstream: Upstream) {
  return {
    url: endpointUrl(upstream.baseUrl, '/v1/messages'),
    headers: { 'x-api-key': upstream.apiKey, 'anthropic-version': VERSION },
  };
}

export const anthropicChat: ChatAdapter = {
  async complete(call) {
    const { url, headers } = endpoint(call.upstream);
    const response = await postJson({
      url,
      headers,
      body: toAnthropicRequest(call.body, call.upstream, false),
      timeoutMs: call.upstream.timeoutMs,
      signal: call.signal,
    });
    return fromAnthropicMessage((await response.body.json()) as Parameters<typeof fromAnthropicMessage>[0]);
  },

  /**
   * Anthropic's event stream as chat-completion chunks. Its usage is cumulative: `message_start` carries the
   * input side, each `message_delta` the output so far; the total is known at `message_stop`.
   */
  async *stream(call) {
    const { url, headers } = endpoint(call.upstream);
    const response = await postJson({
      url,
      headers: { ...headers, accept: 'text/event-stream' },
      body: toAnthropicRequest(call.body, call.upstream, true),
      timeoutMs: call.upstream.timeoutMs,
      signal: call.signal,
    });
    let id = '';
    let model = call.upstream.model;
    const created = Math.floor(Date.now() / 1000);
    let usage: Record<string, number | null> = {};
    const toolIndex = new Map<number, number>();
    const chunk = (choices: unknown[], extra: Record<string, unknown> = {}): ChatChunk => ({
      id: `chatcmpl-${id}`,
      object: 'chat.completion.chunk',
      created,
      model,
      choices,
      ...extra,
    });
    const delta = (d: Record<string, unknown>, finish: string | null = null) => [
      { index: 0, delta: d, logprobs: null, finish_reason: finish },
    ];
    for await (const event of parseSse(response.body, { final: (e) => e.event === 'message_stop' })) {
      const data = JSON.parse(event.data) as StreamEvent;
      switch (data.type) {
        case 'message_start':
          id = data.message?.id ?? id;
          model = data.message?.model ?? model;
          usage = { ...data.message?.usage };
          yield { chunk: chunk(delta({ role: 'assistant', content: '' })) };
          break;
        case 'content_block_start':
          if (data.content_block?.type === 'tool_use') {
            const index = toolIndex.size;
            toolIndex.set(data.index, index);
            yield {
              chunk: chunk(
                delta({
                  tool_calls: [
                    {
                      index,
                      id: data.content_block.id,
                      type: 'function',
                      function: { name: data.content_block.name, arguments: '' },
                    },
                  ],
                }),
              ),
            };
          }
          break;
        case 'content_block_delta': {
          const d = data.delta ?? {};
          if (d.type === 'text_delta') yield { chunk: chunk(delta({ content: d.text })) };
          else if (d.type === 'thinking_delta')
            yield { chunk: chunk(delta({ reasoning_content: d.thinking })) };
          else if (d.type === 'input_json_delta') {
            const index = toolIndex.get(data.index) ?? 0;
            yield {
              chunk: chunk(delta({ tool_calls: [{ index, function: { arguments: d.partial_json } }] })),
            };
          }
          break;
        }
        case 'message_delta':
          usage = { ...usage, ...data.usage };
          if (data.delta?.stop_reason) {
            yield { chunk: chunk(delta({}, FINISH_REASON[data.delta.stop_reason] ?? 'stop')) };
          }
          break;
        case 'message_stop': {
          const reported: ReportedUsage | undefined = readAnthropicUsage(usage as never);
          if (reported) yield { chunk: chunk([], { usage: usageObject(reported) }), usage: reported };
          return;
        }
        case 'error':
          throw new UpstreamError('server', data.error?.message ?? 'the provider failed mid-stream');
        default:
          break;
      }
    }
  },
};
