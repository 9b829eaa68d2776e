import type { ChatChunk, ReportedUsage } from '../../contracts/chat.ts';
import { UpstreamError } from '../errors.ts';
import { finishReason, readGeminiUsage, toolCall, usageObject } from './response.ts';
import type { GeminiResponse, GeminiUsage } from './types.ts';

/**
 * Gemini streams whole GenerateContentResponse objects, one per SSE event, with no [DONE]; each becomes one or
 * more chat-completion chunks. A function call arrives whole, so it becomes one tool-call delta with its full
 * arguments. usageMetadata rides on every event but holds only the prompt side until the event that carries
 * finishReason: the last one from there on (or any with candidate counts) is the reply's usage, sent once, in
 * a final chunk of its own.
 */
export async function* fromGeminiStream(
  events: AsyncIterable<GeminiResponse>,
  model: string,
): AsyncIterable<{ chunk: ChatChunk; usage?: ReportedUsage }> {
  let id: string | undefined;
  let served = model;
  const created = Math.floor(Date.now() / 1000);
  let calls = 0;
  let finished = false;
  let usage: GeminiUsage | undefined;
  const chunk = (choices: unknown[], extra: Record<string, unknown> = {}): ChatChunk => ({
    id: `chatcmpl-${id}`,
    object: 'chat.completion.chunk',
    created,
    model: served,
    choices,
    ...extra,
  });
  const delta = (d: Record<string, unknown>, finish: string | null = null) => [
    { index: 0, delta: d, logprobs: null, finish_reason: finish },
  ];
  for await (const event of events) {
    if (event.error)
      throw new UpstreamError('server', event.error.message ?? 'the provider failed mid-stream');
    served = event.modelVersion ?? served;
    if (id === undefined) {
      id = event.responseId ?? Date.now().toString(36);
      yield { chunk: chunk(delta({ role: 'assistant', content: '' })) };
    }
    const candidate = event.candidates?.[0];
    for (const part of candidate?.content?.parts ?? []) {
      if (part.functionCall) {
        yield { chunk: chunk(delta({ tool_calls: [{ index: calls, ...toolCall(part, calls) }] })) };
        calls += 1;
      } else if (typeof part.text === 'string' && part.text !== '') {
        yield {
          chunk: chunk(delta(part.thought ? { reasoning_content: part.text } : { content: part.text })),
        };
      }
    }
    const blocked = candidate === undefined && event.promptFeedback?.blockReason !== undefined;
    if (!finished && (candidate?.finishReason !== undefined || blocked)) {
      finished = true;
      const reason = blocked ? 'content_filter' : finishReason(candidate?.finishReason, calls > 0);
      yield { chunk: chunk(delta({}, reason)) };
    }
    const meta = event.usageMetadata;
    if (meta && (finished || typeof meta.candidatesTokenCount === 'number')) usage = meta;
  }
  const reported = readGeminiUsage(usage);
  if (reported) yield { chunk: chunk([], { usage: usageObject(reported) }), usage: reported };
}
