import { sampleOf } from './json-schema-sample.ts';

/**
 * The simulators' deterministic "model", shared by the three wire formats so that one conversation gets the same
 * answer and the same numbers whichever provider serves it.
 *
 * Token rule (tests compute expected usage from it):
 * - words(s) = number of whitespace-separated words in s.
 * - prompt tokens = for every message, words(its text) + 3; a system prompt counts as one message (OpenAI's
 *   system message, Anthropic's top-level `system`, Gemini's `systemInstruction`). A message's text is its text
 *   parts plus the text of tool results it carries; images and tool-call arguments count 0.
 * - cached tokens = words(first system text) + 3 when that text contains the word "cached", else 0; part of the
 *   prompt tokens (Anthropic reports them beside input_tokens, which then excludes them).
 * - cache-write tokens (Anthropic only) = the prompt tokens up to the last `cache_control` breakpoint, less the
 *   cached ones (anthropic.ts `cacheWrites`); reported beside input_tokens too.
 * - reply = `echo: <last user text>`, or in JSON mode JSON.stringify({ echo: <last user text> }), or for a JSON
 *   schema with properties (OpenAI's json_schema) JSON.stringify(sampleOf(schema)) (json-schema-sample.ts); over the
 *   output limit it keeps its first `limit` words and finishes with 'length'. completion tokens = words(reply).
 * - tool call: when tools are given (and tool choice is not 'none'), the conversation ends with a user text message
 *   and that text has the word "weather", the model calls the first tool with {"city":"Paris"}; it counts
 *   1 + words(arguments) = 2 completion tokens and the output limit does not apply.
 * - reasoning = `thinking about: <last user text>`, reasoning tokens = its words. OpenAI and Anthropic count them
 *   inside completion/output tokens; Gemini reports them apart (thoughtsTokenCount). They come out of the output
 *   limit first, as OpenAI's max_completion_tokens: the visible reply gets what is left, and a limit that the
 *   reasoning uses up leaves no reply at all, finished with 'length'.
 * The last user text is the text of the last user message that has any (tool results skipped).
 */

export interface Conversation {
  /** The text of each message, the system prompt first when there is one. */
  messageTexts: string[];
  systemText: string | undefined;
  lastUserText: string;
  /** False when the conversation ends with tool results: the model then answers instead of calling again. */
  endsWithUserText: boolean;
}

export interface Ask {
  conversation: Conversation;
  limit: number | undefined;
  json: boolean;
  /** A structured-output schema to fill (json-schema-sample.ts); wins over `json`. */
  schema?: unknown;
  toolName: string | undefined;
  reasoning: boolean;
  /** The model's own reply to the last user text, instead of the echo. */
  reply?: (lastUserText: string) => string;
}

export interface Answer {
  reasoning: string | undefined;
  reasoningTokens: number;
  text: string | undefined;
  toolCall: { name: string; args: { city: string }; argsJson: string } | undefined;
  finish: 'stop' | 'length' | 'tool';
  promptTokens: number;
  cachedTokens: number;
  /** Visible output only; reasoning tokens are apart. */
  completionTokens: number;
}

const perMessage = 3;

export function words(text: string): number {
  return text.match(/\S+/g)?.length ?? 0;
}

/** The text up to the end of its n-th word. */
export function truncateWords(text: string, n: number): string {
  return (text.match(/\s*\S+/g) ?? []).slice(0, Math.max(0, n)).join('');
}

/** Stream deltas: each word with the whitespace before it (trailing whitespace rides with the last), so they join back. */
export function pieces(text: string): string[] {
  return text.match(/\s*\S+(?:\s+$)?/g) ?? (text === '' ? [] : [text]);
}

/** Tool-call argument fragments, cut at fixed sizes the way providers split them mid-token. */
export function fragments(text: string, size = 5): string[] {
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}

export function reasoningModel(model: string): boolean {
  return /reasoning|thinking|o3|gpt-5/i.test(model);
}

export function answer(ask: Ask): Answer {
  const { conversation } = ask;
  const promptTokens = conversation.messageTexts.reduce((sum, text) => sum + words(text) + perMessage, 0);
  const system = conversation.systemText;
  const cachedTokens = system !== undefined && /\bcached\b/i.test(system) ? words(system) + perMessage : 0;
  const thought = ask.reasoning ? `thinking about: ${conversation.lastUserText}` : undefined;
  const reasoning =
    thought !== undefined && ask.limit !== undefined ? truncateWords(thought, ask.limit) : thought;
  const reasoningTokens = reasoning ? words(reasoning) : 0;
  const base = { reasoning, reasoningTokens, promptTokens, cachedTokens };
  // What the reasoning leaves of the output limit for the visible reply.
  const room = ask.limit === undefined ? undefined : Math.max(0, ask.limit - reasoningTokens);

  if (ask.toolName && conversation.endsWithUserText && /\bweather\b/i.test(conversation.lastUserText)) {
    const args = { city: 'Paris' };
    const argsJson = JSON.stringify(args);
    const toolCall = { name: ask.toolName, args, argsJson };
    return { ...base, text: undefined, toolCall, finish: 'tool', completionTokens: 1 + words(argsJson) };
  }

  const full = ask.reply
    ? ask.reply(conversation.lastUserText)
    : ask.schema !== undefined
      ? JSON.stringify(sampleOf(ask.schema))
      : ask.json
        ? JSON.stringify({ echo: conversation.lastUserText })
        : `echo: ${conversation.lastUserText}`;
  const over = room !== undefined && words(full) > room;
  const text = over ? truncateWords(full, room ?? 0) : full;
  return {
    ...base,
    text,
    toolCall: undefined,
    finish: over ? 'length' : 'stop',
    completionTokens: words(text),
  };
}

/** Narrowing helpers for loosely-typed request bodies. */
export type Obj = Record<string, unknown>;

export function isObj(value: unknown): value is Obj {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function list(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

export function str(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}
