import { z } from 'zod';
import { refuseUnknownFields } from '../contracts/request-fields.ts';

/** Roles whose message is its content: only an assistant's may go without (its tool calls say what it did). */
const NEEDS_CONTENT = new Set(['system', 'developer', 'user', 'tool']);

const Message = z
  .object({
    role: z.enum(['system', 'developer', 'user', 'assistant', 'tool', 'function']),
    content: z.union([z.string(), z.array(z.record(z.string(), z.unknown())), z.null()]).optional(),
    name: z.string().optional(),
    tool_calls: z.array(z.unknown()).optional(),
    tool_call_id: z.string().optional(),
  })
  .loose()
  .superRefine((message, context) => {
    if (NEEDS_CONTENT.has(message.role) && message.content == null)
      context.addIssue({
        code: 'custom',
        path: ['content'],
        message: `a ${message.role} message needs its content (a string or a list of parts)`,
      });
  });

/** The function a tool or a `tool_choice` object names, if it names one. */
function functionName(holder: unknown): string | undefined {
  const named = (holder as { function?: { name?: unknown } } | null)?.function?.name;
  return typeof named === 'string' ? named : undefined;
}

/**
 * Every top-level field of OpenAI's chat-completions request (CreateChatCompletionRequest, as OpenAI's API
 * description and openai-node 6.30 give it). Each is forwarded and priced by the tokens it costs, held for (`n`,
 * `prediction`), or refused before dispatch when it bills what the gateway cannot price (chat/priced-fields.ts).
 */
const OPENAI_FIELDS = [
  'messages',
  'model',
  'audio',
  'frequency_penalty',
  'function_call',
  'functions',
  'logit_bias',
  'logprobs',
  'max_completion_tokens',
  'max_tokens',
  'metadata',
  'modalities',
  'n',
  'parallel_tool_calls',
  'prediction',
  'presence_penalty',
  'prompt_cache_key',
  'prompt_cache_retention',
  'reasoning_effort',
  'response_format',
  'safety_identifier',
  'seed',
  'service_tier',
  'stop',
  'store',
  'stream',
  'stream_options',
  'temperature',
  'tool_choice',
  'tools',
  'top_logprobs',
  'top_p',
  'user',
  'verbosity',
  'web_search_options',
];

/** The gateway's own fields, never sent upstream. */
const GATEWAY_FIELDS = ['models', 'baseline_model', 'webhook_url', 'cache'];

const CHAT_FIELDS: ReadonlySet<string> = new Set([...OPENAI_FIELDS, ...GATEWAY_FIELDS]);

const TextPart = z.object({ type: z.literal('text'), text: z.string() }).loose();

/** Predicted output: text the provider checks its answer against, billing what it rejects as output. */
const Prediction = z
  .object({ type: z.literal('content'), content: z.union([z.string(), z.array(TextPart)]) })
  .loose();

/**
 * The chat-completions request. A field outside OpenAI's and the gateway's own is refused by name: unknown, it
 * could be billed by the provider at a price no hold covers.
 */
export const ChatCompletionRequest = z
  .object({
    model: z.string().min(1).optional(),
    baseline_model: z.string().optional(),
    messages: z.array(Message).min(1, 'messages must hold at least one message'),
    stream: z.boolean().optional(),
    stream_options: z.object({ include_usage: z.boolean().optional() }).loose().optional(),
    temperature: z.number().min(0).max(2).optional(),
    max_tokens: z.number().int().positive().optional(),
    max_completion_tokens: z.number().int().positive().optional(),
    // Every choice is output the provider bills, so the hold covers n of them (OpenAI allows up to 128).
    n: z.number().int().min(1).max(128).optional(),
    reasoning_effort: z.enum(['none', 'low', 'medium', 'high', 'xhigh', 'max']).optional(),
    tools: z.array(z.unknown()).optional(),
    tool_choice: z.unknown().optional(),
    /** The deprecated form of `tools`: billed as input like them. */
    functions: z.array(z.unknown()).optional(),
    response_format: z
      .object({ type: z.enum(['text', 'json_object', 'json_schema']) })
      .loose()
      .optional(),
    prediction: Prediction.nullish(),
    service_tier: z.string().nullish(),
    /** Fallback models, as OpenRouter takes them. */
    models: z.array(z.string().min(1)).optional(),
    webhook_url: z.string().url().optional(),
    cache: z.enum(['auto', 'force', 'semantic', 'skip']).optional(),
  })
  .loose()
  .superRefine(refuseUnknownFields(CHAT_FIELDS))
  .superRefine((body, context) => {
    const chosen = functionName(body.tool_choice);
    if (chosen !== undefined && !(body.tools ?? []).some((tool) => functionName(tool) === chosen))
      context.addIssue({
        code: 'custom',
        path: ['tool_choice'],
        message: `names the function '${chosen}', which is not in 'tools'`,
      });
  });

export type ChatCompletionRequest = z.infer<typeof ChatCompletionRequest>;

const TAG = /^[\x21-\x7e][\x20-\x7e]{0,127}$/;

/**
 * A cost tag named in a body (a tag budget, a sub-account's default tag): what the `x-gw-tag` header can carry,
 * so no budget is set for a tag no request could be charged under.
 */
export const CostTag = z
  .string()
  .trim()
  .regex(TAG, '1 to 128 printable ASCII characters, as the x-gw-tag header takes');

/** The cost tag: the `x-gw-tag` header, else the sub-account's default tag. */
export function requestTag(header: string | string[] | undefined, fallback: string | null): string | null {
  if (header === undefined) return fallback;
  const value = (Array.isArray(header) ? header[0] : header)?.trim() ?? '';
  if (!TAG.test(value)) return null;
  return value;
}

export function isValidTag(header: string | string[] | undefined): boolean {
  if (header === undefined) return true;
  const value = (Array.isArray(header) ? header[0] : header)?.trim() ?? '';
  return TAG.test(value);
}
