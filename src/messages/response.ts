import { randomBytes } from 'node:crypto';
import type { ChatCompletion, ReportedUsage } from '../contracts/chat.ts';

export type StopReason = 'end_turn' | 'max_tokens' | 'tool_use' | 'refusal';

export type ResponseBlock =
  | { type: 'thinking'; thinking: string; signature: string }
  | { type: 'text'; text: string }
  | { type: 'tool_use'; id: string; name: string; input: Record<string, unknown> };

export interface MessageUsage {
  input_tokens: number;
  output_tokens: number;
  cache_read_input_tokens: number;
  cache_creation_input_tokens: number;
}

export interface MessageResponse {
  id: string;
  type: 'message';
  role: 'assistant';
  model: string;
  content: ResponseBlock[];
  stop_reason: StopReason;
  stop_sequence: null;
  usage: MessageUsage;
}

const STOP_REASONS: Record<string, StopReason> = {
  stop: 'end_turn',
  length: 'max_tokens',
  tool_calls: 'tool_use',
  function_call: 'tool_use',
  content_filter: 'refusal',
};

/** A chat-completions finish reason as a stop reason; which stop sequence matched is not reported upstream. */
export function stopReason(finish: unknown): StopReason {
  return (typeof finish === 'string' ? STOP_REASONS[finish] : undefined) ?? 'end_turn';
}

/** Anthropic counts cache reads and writes beside `input_tokens`; the chat-completions format counts them in it. */
export function messageUsage(usage: ReportedUsage): MessageUsage {
  return {
    input_tokens: usage.promptTokens - usage.cachedPromptTokens - usage.cacheWriteTokens,
    output_tokens: usage.completionTokens,
    cache_read_input_tokens: usage.cachedPromptTokens,
    cache_creation_input_tokens: usage.cacheWriteTokens,
  };
}

/** Anthropic's own id when the completion came from Anthropic (`chatcmpl-msg_...`), else a fresh one. */
export function messageIdFor(completionId: unknown): string {
  const own = typeof completionId === 'string' ? /^chatcmpl-(msg_\w+)$/.exec(completionId)?.[1] : undefined;
  return own ?? `msg_${randomBytes(12).toString('hex')}`;
}

/** Tool input must be an object; arguments that are not one are kept whole rather than lost. */
export function toolInput(args: unknown): Record<string, unknown> {
  if (typeof args !== 'string' || args.trim() === '') return {};
  try {
    const parsed: unknown = JSON.parse(args);
    if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) {
      return parsed as Record<string, unknown>;
    }
  } catch {
    // falls through to the raw arguments
  }
  return { arguments: args };
}

interface ChatToolCall {
  id?: unknown;
  function?: { name?: unknown; arguments?: unknown };
}

interface ChatMessage {
  content?: unknown;
  refusal?: unknown;
  reasoning_content?: unknown;
  tool_calls?: ChatToolCall[];
}

function textContent(message: ChatMessage): string {
  const { content, refusal } = message;
  if (typeof content === 'string' && content !== '') return content;
  if (Array.isArray(content)) {
    return content
      .map((part: { type?: unknown; text?: unknown }) =>
        part.type === 'text' && typeof part.text === 'string' ? part.text : '',
      )
      .join('');
  }
  return typeof refusal === 'string' ? refusal : '';
}

/** The blocks of one chat message, in Anthropic's order: thinking, text, then tool calls. */
export function responseBlocks(message: ChatMessage, id: string): ResponseBlock[] {
  const blocks: ResponseBlock[] = [];
  const reasoning = message.reasoning_content;
  // The chat-completions format carries no signature, so a thinking block cannot be verified if sent back.
  if (typeof reasoning === 'string' && reasoning !== '')
    blocks.push({ type: 'thinking', thinking: reasoning, signature: '' });
  const text = textContent(message);
  if (text !== '') blocks.push({ type: 'text', text });
  for (const [index, call] of (message.tool_calls ?? []).entries()) {
    blocks.push({
      type: 'tool_use',
      id: typeof call.id === 'string' && call.id !== '' ? call.id : `toolu_${id}_${index}`,
      name: typeof call.function?.name === 'string' ? call.function.name : '',
      input: toolInput(call.function?.arguments),
    });
  }
  return blocks;
}

/** A chat.completion as a Messages response; `usage` is what the request was billed on. */
export function toMessageResponse(
  completion: ChatCompletion,
  meta: { id: string; model: string; usage: ReportedUsage },
): MessageResponse {
  const choice = completion.choices[0] as { message?: ChatMessage; finish_reason?: unknown } | undefined;
  return {
    id: meta.id,
    type: 'message',
    role: 'assistant',
    model: meta.model,
    content: responseBlocks(choice?.message ?? {}, meta.id),
    stop_reason: stopReason(choice?.finish_reason),
    stop_sequence: null,
    usage: messageUsage(meta.usage),
  };
}
