/**
 * The unified format between the gateway and its adapters is the chat-completions wire format itself: requests
 * and responses are its JSON objects, and streams are its chunks. Each adapter translates its provider's native
 * format to and from it; shared code never names a provider.
 */

export type ChatBody = Record<string, unknown> & { messages: unknown[] };
export type ChatCompletion = Record<string, unknown> & { choices: unknown[]; usage?: unknown };
export type ChatChunk = Record<string, unknown> & { choices: unknown[]; usage?: unknown };

/** Usage as the provider reported it; undefined when it reported none (then the gateway estimates). */
export interface ReportedUsage {
  promptTokens: number;
  completionTokens: number;
  /** Part of promptTokens read from the provider's prompt cache. */
  cachedPromptTokens: number;
  /** Part of promptTokens written to the provider's prompt cache (priced apart by some providers). */
  cacheWriteTokens: number;
  /** Part of completionTokens spent on reasoning. */
  reasoningTokens: number;
}

export interface Upstream {
  /** The provider's model id. */
  model: string;
  baseUrl: string;
  apiKey: string;
  timeoutMs: number;
  /** Quirks of the model that change the request. */
  quirks: { noSampling: boolean; maxTokensField: 'max_tokens' | 'max_completion_tokens'; reasoning: boolean };
}

export interface ChatCall {
  /** The client's request, with `max_tokens` already set to the limit the gateway reserved for. */
  body: ChatBody;
  upstream: Upstream;
  signal: AbortSignal;
}

export interface ChatAdapter {
  complete(call: ChatCall): Promise<{ completion: ChatCompletion; usage: ReportedUsage | undefined }>;
  /** Chunks in the chat-completions format; the last ones carry usage when the provider reports it. */
  stream(call: ChatCall): AsyncIterable<{ chunk: ChatChunk; usage?: ReportedUsage }>;
}
