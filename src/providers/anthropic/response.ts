import type { ChatCompletion, ReportedUsage } from '../../contracts/chat.ts';

/** Anthropic's stop reasons as chat-completions finish reasons. */
export const FINISH_REASON: Record<string, string> = {
  end_turn: 'stop',
  stop_sequence: 'stop',
  pause_turn: 'stop',
  max_tokens: 'length',
  tool_use: 'tool_calls',
  refusal: 'content_filter',
};

export interface AnthropicUsage {
  input_tokens?: number;
  output_tokens?: number;
  cache_read_input_tokens?: number | null;
  cache_creation_input_tokens?: number | null;
}

/**
 * Anthropic counts cache reads and writes apart from `input_tokens`; the chat-completions format counts them
 * inside `prompt_tokens`. Thinking tokens are part of `output_tokens`.
 */
export function readAnthropicUsage(usage: AnthropicUsage | undefined): ReportedUsage | undefined {
  if (!usage || typeof usage.input_tokens !== 'number' || typeof usage.output_tokens !== 'number')
    return undefined;
  const cached = usage.cache_read_input_tokens ?? 0;
  const written = usage.cache_creation_input_tokens ?? 0;
  return {
    promptTokens: usage.input_tokens + cached + written,
    completionTokens: usage.output_tokens,
    cachedPromptTokens: cached,
    cacheWriteTokens: written,
    reasoningTokens: 0,
  };
}

export function usageObject(usage: ReportedUsage): Record<string, unknown> {
  return {
    prompt_tokens: usage.promptTokens,
    completion_tokens: usage.completionTokens,
    total_tokens: usage.promptTokens + usage.completionTokens,
    prompt_tokens_details: { cached_tokens: usage.cachedPromptTokens },
    completion_tokens_details: { reasoning_tokens: usage.reasoningTokens },
  };
}

interface AnthropicMessage {
  id: string;
  model: string;
  content: { type: string; text?: string; thinking?: string; id?: string; name?: string; input?: unknown }[];
  stop_reason: string | null;
  usage?: AnthropicUsage;
}

export function fromAnthropicMessage(message: AnthropicMessage): {
  completion: ChatCompletion;
  usage: ReportedUsage | undefined;
} {
  const text = message.content
    .filter((b) => b.type === 'text')
    .map((b) => b.text ?? '')
    .join('');
  const reasoning = message.content
    .filter((b) => b.type === 'thinking')
    .map((b) => b.thinking ?? '')
    .join('');
  const toolCalls = message.content
    .filter((b) => b.type === 'tool_use')
    .map((b) => ({
      id: b.id,
      type: 'function',
      function: { name: b.name, arguments: JSON.stringify(b.input ?? {}) },
    }));
  const usage = readAnthropicUsage(message.usage);
  const completion: ChatCompletion = {
    id: `chatcmpl-${message.id}`,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: message.model,
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: text === '' && toolCalls.length > 0 ? null : text,
          // OpenAI's field for a refusal the model states apart from its text; Claude states none apart (a
          // `refusal` stop keeps what it wrote as content, with finish_reason content_filter).
          refusal: null,
          ...(reasoning ? { reasoning_content: reasoning } : {}),
          ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}),
        },
        logprobs: null,
        finish_reason: FINISH_REASON[message.stop_reason ?? ''] ?? 'stop',
      },
    ],
    ...(usage ? { usage: usageObject(usage) } : {}),
  };
  return { completion, usage };
}
