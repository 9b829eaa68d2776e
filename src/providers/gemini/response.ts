import type { ChatCompletion, ReportedUsage } from '../../contracts/chat.ts';
import type { GeminiPart, GeminiResponse, GeminiUsage } from './types.ts';

/** Gemini's finish reasons as chat-completions ones; the rest (OTHER, LANGUAGE, ...) read as 'stop'. */
const FINISH_REASON: Record<string, string> = {
  STOP: 'stop',
  MAX_TOKENS: 'length',
  SAFETY: 'content_filter',
  RECITATION: 'content_filter',
  BLOCKLIST: 'content_filter',
  PROHIBITED_CONTENT: 'content_filter',
  SPII: 'content_filter',
  IMAGE_SAFETY: 'content_filter',
};

/** A reply with function calls finishes with 'tool_calls' whatever Gemini said (it says STOP). */
export function finishReason(reason: string | undefined, calledTools: boolean): string {
  return calledTools ? 'tool_calls' : (FINISH_REASON[reason ?? ''] ?? 'stop');
}

/**
 * Google leaves zero counts out of its JSON (proto3), so a missing count in a final usageMetadata is 0; a
 * missing promptTokenCount means no usage was reported at all. Thoughts are counted apart from the candidates
 * and tool-use prompts (search, code execution) apart from the prompt; both are billed.
 */
export function readGeminiUsage(usage: GeminiUsage | undefined): ReportedUsage | undefined {
  if (typeof usage?.promptTokenCount !== 'number') return undefined;
  const thoughts = usage.thoughtsTokenCount ?? 0;
  return {
    promptTokens: usage.promptTokenCount + (usage.toolUsePromptTokenCount ?? 0),
    completionTokens: (usage.candidatesTokenCount ?? 0) + thoughts,
    cachedPromptTokens: usage.cachedContentTokenCount ?? 0,
    cacheWriteTokens: 0,
    reasoningTokens: thoughts,
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

/**
 * A functionCall part as a chat-completions tool call. Gemini gives calls no id, so `call_<n>` numbers them
 * within the reply; the thought signature rides along where Google's own OpenAI-compatible endpoint puts it.
 */
export function toolCall(part: GeminiPart, n: number): Record<string, unknown> {
  return {
    id: `call_${n}`,
    type: 'function',
    function: {
      name: part.functionCall?.name ?? '',
      arguments: JSON.stringify(part.functionCall?.args ?? {}),
    },
    ...(part.thoughtSignature && { extra_content: { google: { thought_signature: part.thoughtSignature } } }),
  };
}

export function fromGeminiResponse(
  response: GeminiResponse,
  model: string,
): { completion: ChatCompletion; usage: ReportedUsage | undefined } {
  const candidate = response.candidates?.[0];
  const parts = candidate?.content?.parts ?? [];
  const text = (thought: boolean) =>
    parts
      .filter((p) => typeof p.text === 'string' && (p.thought === true) === thought)
      .map((p) => p.text)
      .join('');
  const content = text(false);
  const reasoning = text(true);
  const toolCalls = parts.filter((p) => p.functionCall).map(toolCall);
  // A prompt Google blocks comes back without any candidate, its reason in promptFeedback.
  const blocked = candidate === undefined && response.promptFeedback?.blockReason !== undefined;
  const usage = readGeminiUsage(response.usageMetadata);
  const completion: ChatCompletion = {
    id: `chatcmpl-${response.responseId ?? Date.now().toString(36)}`,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: response.modelVersion ?? model,
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: content === '' && toolCalls.length > 0 ? null : content,
          // OpenAI's field for a refusal stated apart from the text; Gemini has none (a block is a finish reason).
          refusal: null,
          ...(reasoning && { reasoning_content: reasoning }),
          ...(toolCalls.length > 0 && { tool_calls: toolCalls }),
        },
        logprobs: null,
        finish_reason: blocked
          ? 'content_filter'
          : finishReason(candidate?.finishReason, toolCalls.length > 0),
      },
    ],
    ...(usage && { usage: usageObject(usage) }),
  };
  return { completion, usage };
}
