import { DomainError } from '../../commands/errors.ts';
import { ChatCompletionRequest } from '../chat/request.ts';
import { toChatRequest } from '../messages/request.ts';
import { MessagesRequest } from '../messages/schema.ts';

/** The endpoints whose requests a replay can re-run: both are chat underneath. */
export const REPLAYABLE = ['/v1/chat/completions', '/v1/messages'] as const;
export type ReplayableEndpoint = (typeof REPLAYABLE)[number];

export function isReplayable(endpoint: string): endpoint is ReplayableEndpoint {
  return (REPLAYABLE as readonly string[]).includes(endpoint);
}

/**
 * The stored request as a chat request for `model`: the other model is asked exactly what the source was, once,
 * unstreamed and without fallbacks (a replay compares two models, not a model and whatever served instead).
 */
export function asChatRequest(
  endpoint: ReplayableEndpoint,
  stored: unknown,
  model: string,
): ChatCompletionRequest {
  const chat =
    endpoint === '/v1/messages'
      ? toChatRequest(parseStored(MessagesRequest, stored))
      : parseStored(ChatCompletionRequest, stored);
  const { models: _m, stream_options: _o, baseline_model: _b, webhook_url: _w, cache: _c, ...rest } = chat;
  return { ...rest, model, stream: false };
}

function parseStored<T>(
  schema: { safeParse(v: unknown): { success: true; data: T } | { success: false } },
  v: unknown,
): T {
  const parsed = schema.safeParse(v);
  if (!parsed.success) {
    throw new DomainError('conflict', 'The stored request body cannot be read as a request of its endpoint');
  }
  return parsed.data;
}

/** Single-turn: one user message, perhaps after a system prompt; what a shadow mirrors. */
export function isSingleTurn(chat: ChatCompletionRequest): boolean {
  const messages = chat.messages as { role?: unknown }[];
  return messages.filter((m) => m.role !== 'system' && m.role !== 'developer').length === 1;
}

/** The text of an answer as stored: a chat completion, an assembled stream, or an Anthropic message. */
export function outputText(response: unknown): string {
  if (typeof response !== 'object' || response === null) return '';
  const r = response as Record<string, unknown>;
  // The log keeps what the adapter returned: the completion beside its usage.
  if (typeof r.completion === 'object' && r.completion !== null) return outputText(r.completion);
  if (typeof r.message === 'object' && r.message !== null) return outputText(r.message);
  const choice = Array.isArray(r.choices) ? (r.choices[0] as Record<string, unknown> | undefined) : undefined;
  const message = choice?.message as { content?: unknown } | undefined;
  if (message) return contentText(message.content);
  // A streamed answer is logged assembled: per choice its text; a native Anthropic stream as its events.
  if (typeof choice?.text === 'string') return choice.text;
  if (Array.isArray(r.events)) return r.events.map(deltaText).join('');
  if (Array.isArray(r.content)) return contentText(r.content);
  return typeof r.text === 'string' ? r.text : '';
}

/** The text of one logged SSE event (`{event, data}`, data as sent): a content_block_delta's text. */
function deltaText(event: unknown): string {
  const data = (event as { data?: unknown } | null)?.data;
  let parsed: unknown;
  try {
    parsed = typeof data === 'string' ? JSON.parse(data) : data;
  } catch {
    return '';
  }
  const delta = (parsed as { delta?: { text?: unknown } } | null)?.delta;
  return typeof delta?.text === 'string' ? delta.text : '';
}

function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((block) => block as { type?: unknown; text?: unknown })
    .filter((block) => block.type === 'text' && typeof block.text === 'string')
    .map((block) => block.text as string)
    .join('');
}

/** The last user message's text, for the judge to see what was asked. */
export function askedText(chat: ChatCompletionRequest): string {
  const messages = chat.messages as { role?: unknown; content?: unknown }[];
  return messages.map((m) => `${String(m.role)}: ${contentText(m.content)}`).join('\n');
}
