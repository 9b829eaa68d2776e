import type { Probe } from '../cache/cache.ts';
import type { ChatChunk, ChatCompletion, ReportedUsage } from '../contracts/chat.ts';
import type { Found } from '../pipeline/cached.ts';
import type { ChatItem } from './complete.ts';
import { completionId } from './service.ts';

// A stored chat answer given back: as a completion, or as the chunks a provider would stream.

/** A lookup that found a chat answer (the chat lookup drops an entry of another kind). */
export type ChatHit = Found<Probe>;

function chatAnswer(probe: ChatHit) {
  const answer = probe.hit.entry.answer;
  if (answer.kind !== 'chat') throw new Error('a chat hit on an entry of another kind');
  return answer;
}

/** The figures the original answer was billed on. */
export const hitUsage = (probe: ChatHit): ReportedUsage => chatAnswer(probe).usage;

/** Usage in the chat-completions format, from the figures the original was billed on. */
export function usageObject(usage: ReportedUsage) {
  return {
    prompt_tokens: usage.promptTokens,
    completion_tokens: usage.completionTokens,
    total_tokens: usage.promptTokens + usage.completionTokens,
    prompt_tokens_details: { cached_tokens: usage.cachedPromptTokens },
    completion_tokens_details: { reasoning_tokens: usage.reasoningTokens },
  };
}

/** A stored answer as a fresh chat.completion: its own id and time, the model whose answer it is. */
export function hitCompletion(probe: ChatHit): ChatCompletion & { usage: ReturnType<typeof usageObject> } {
  const answer = chatAnswer(probe);
  return {
    id: completionId(),
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: probe.hit.entry.model,
    choices: answer.choices.map((c) => ({
      index: c.index,
      message: {
        role: 'assistant',
        content: c.content,
        ...(c.reasoning !== null && { reasoning_content: c.reasoning }),
        refusal: null,
      },
      logprobs: null,
      finish_reason: c.finishReason,
    })),
    usage: usageObject(answer.usage),
  };
}

/** Text cut where a provider would cut it: a few words a chunk, spaces kept, so the pieces join to the original. */
function pieces(text: string): string[] {
  const words = text.match(/\S+\s*|\s+/g) ?? [];
  const out: string[] = [];
  for (let i = 0; i < words.length; i += 4) out.push(words.slice(i, i + 4).join(''));
  return out;
}

/**
 * A stored answer as the chunks a provider streams: per choice the role, its reasoning, its text a few words at a
 * time, and the finish reason; then one chunk with the usage (as every stream carries it upstream; the encoder
 * passes it on only when the client asked).
 */
export function hitItems(probe: ChatHit): ChatItem[] {
  const answer = chatAnswer(probe);
  const head = {
    id: completionId(),
    object: 'chat.completion.chunk',
    created: Math.floor(Date.now() / 1000),
    model: probe.hit.entry.model,
  };
  const chunk = (choices: unknown[], extra: Record<string, unknown> = {}): ChatChunk => ({
    ...head,
    choices,
    ...extra,
  });
  const items: ChatItem[] = [];
  for (const c of answer.choices) {
    const delta = (d: Record<string, unknown>, finish: string | null = null) =>
      chunk([{ index: c.index, delta: d, logprobs: null, finish_reason: finish }]);
    items.push({ chunk: delta({ role: 'assistant', content: '' }) });
    for (const part of pieces(c.reasoning ?? '')) items.push({ chunk: delta({ reasoning_content: part }) });
    for (const part of pieces(c.content)) items.push({ chunk: delta({ content: part }) });
    items.push({ chunk: delta({}, c.finishReason) });
  }
  items.push({ chunk: chunk([], { usage: usageObject(answer.usage) }), usage: answer.usage });
  return items;
}
