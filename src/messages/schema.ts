import { z } from 'zod';
import { refuseUnknownFields } from '../contracts/request-fields.ts';
import { cacheBreakpoints, type Path } from './cache-control.ts';

/**
 * A cache breakpoint. Anthropic bills a 5-minute cache write at the price list's cache-write rate, a 1-hour one at
 * twice the input rate, which the price list does not give: `oneHourCacheWrite` refuses it wherever it is.
 */
const CacheControl = z.object({ type: z.literal('ephemeral'), ttl: z.enum(['5m', '1h']).optional() }).loose();
const cacheControl = { cache_control: CacheControl.nullish() };

const ONE_HOUR =
  "a 1-hour cache write is billed at a rate the price list does not give; use '5m' or leave ttl out";

/** Where a breakpoint asks for a 1-hour cache: the request, a system block, a tool, a message's blocks. */
function oneHourCacheWrite(body: {
  system?: unknown;
  messages?: unknown;
  tools?: unknown;
}): Path | undefined {
  for (const { path, cacheControl } of cacheBreakpoints(body))
    if (cacheControl.ttl === '1h') return [...path, 'ttl'];
  return undefined;
}

// Blocks stay loose: fields the translation does not read (citations) are accepted and dropped.
const TextBlock = z.object({ type: z.literal('text'), text: z.string(), ...cacheControl }).loose();

const ImageSource = z.discriminatedUnion('type', [
  z.object({ type: z.literal('base64'), media_type: z.string().min(1), data: z.string() }).loose(),
  z.object({ type: z.literal('url'), url: z.string().min(1) }).loose(),
]);
const ImageBlock = z.object({ type: z.literal('image'), source: ImageSource, ...cacheControl }).loose();

const ToolUseBlock = z
  .object({
    type: z.literal('tool_use'),
    id: z.string().min(1),
    name: z.string().min(1),
    input: z.record(z.string(), z.unknown()),
    ...cacheControl,
  })
  .loose();

const ToolResultBlock = z
  .object({
    type: z.literal('tool_result'),
    tool_use_id: z.string().min(1),
    content: z.union([z.string(), z.array(z.discriminatedUnion('type', [TextBlock, ImageBlock]))]).optional(),
    is_error: z.boolean().optional(),
    ...cacheControl,
  })
  .loose();

// Earlier turns' thinking is accepted so that a conversation can be sent back as it was received; the
// chat-completions format has no way to carry it upstream.
const ThinkingBlock = z.object({ type: z.literal('thinking') }).loose();
const RedactedThinkingBlock = z.object({ type: z.literal('redacted_thinking') }).loose();

const ContentBlock = z.discriminatedUnion('type', [
  TextBlock,
  ImageBlock,
  ToolUseBlock,
  ToolResultBlock,
  ThinkingBlock,
  RedactedThinkingBlock,
]);

const Message = z.object({
  role: z.enum(['user', 'assistant', 'system']),
  content: z.union([z.string(), z.array(ContentBlock)]),
});

const System = z.union([z.string(), z.array(TextBlock)]);

// Only client tools: Anthropic's server tools (web search, code execution, ...) have no chat-completions form.
const Tool = z
  .object({
    type: z.literal('custom').optional(),
    name: z.string().min(1),
    description: z.string().optional(),
    input_schema: z.record(z.string(), z.unknown()),
    ...cacheControl,
  })
  .loose();

const parallel = { disable_parallel_tool_use: z.boolean().optional() };
const ToolChoice = z.discriminatedUnion('type', [
  z.object({ type: z.literal('auto'), ...parallel }),
  z.object({ type: z.literal('any'), ...parallel }),
  z.object({ type: z.literal('tool'), name: z.string().min(1), ...parallel }),
  z.object({ type: z.literal('none') }),
]);

const Thinking = z.discriminatedUnion('type', [
  z.object({ type: z.literal('enabled'), budget_tokens: z.number().int().min(1024) }).loose(),
  z.object({ type: z.literal('adaptive') }).loose(),
  z.object({ type: z.literal('disabled') }).loose(),
]);

const Prompt = {
  model: z.string().min(1),
  messages: z.array(Message).min(1, 'messages must hold at least one message'),
  system: System.optional(),
  tools: z.array(Tool).optional(),
  tool_choice: ToolChoice.optional(),
  thinking: Thinking.optional(),
};

/**
 * The top-level fields of Anthropic's Messages request that cost tokens alone, and the gateway's own (`models`,
 * `cache`). The native way sends the body to Anthropic as it came, so anything else is refused by name: a field the
 * gateway does not know may be billed at a price no hold covers (a code-execution container, a beta tool server).
 */
const MESSAGES_FIELDS: ReadonlySet<string> = new Set([
  'model',
  'messages',
  'max_tokens',
  'system',
  'metadata',
  'stop_sequences',
  'stream',
  'temperature',
  'top_k',
  'top_p',
  'tools',
  'tool_choice',
  'thinking',
  'service_tier',
  'cache_control',
  'output_config',
  'speed',
  'inference_geo',
  'container',
  'models',
  'cache',
]);

/** A field Anthropic bills at rates of its own, which the price list does not give: accepted only when empty. */
const unpriced = (why: string) => z.null({ error: why }).optional();

/**
 * Anthropic's Messages request; fields it defines that the translated way cannot use are accepted and dropped.
 * `service_tier` `auto` runs at the tier the operator's Anthropic organisation has, as a request without it does.
 */
export const MessagesRequest = z
  .object({
    ...Prompt,
    max_tokens: z.number().int().positive(),
    temperature: z.number().min(0).max(1).optional(),
    top_p: z.number().min(0).max(1).optional(),
    top_k: z.number().int().nonnegative().optional(),
    stop_sequences: z.array(z.string()).optional(),
    stream: z.boolean().optional(),
    metadata: z.object({ user_id: z.string().nullish() }).loose().optional(),
    service_tier: z.enum(['auto', 'standard_only']).optional(),
    cache_control: CacheControl.nullish(),
    speed: z
      .literal('standard', {
        error:
          "fast mode is billed at premium rates the price list does not give; use 'standard' or leave it out",
      })
      .nullish(),
    inference_geo: unpriced(
      'inference in a chosen region is billed at rates the price list does not give; leave it out',
    ),
    container: unpriced('a code-execution container is billed by the hour, which the gateway cannot price'),
    /** The gateway's fallbacks, as on /chat/completions. */
    models: z.array(z.string().min(1)).optional(),
  })
  .loose()
  .superRefine(refuseUnknownFields(MESSAGES_FIELDS))
  .superRefine((body, context) => {
    const path = oneHourCacheWrite(body);
    if (path) context.addIssue({ code: 'custom', path, message: ONE_HOUR });
  });

export const CountTokensRequest = z.object(Prompt).loose();

export type MessagesRequest = z.infer<typeof MessagesRequest>;
export type CountTokensRequest = z.infer<typeof CountTokensRequest>;
export type AnthropicMessage = z.infer<typeof Message>;
export type AnthropicSystem = z.infer<typeof System>;
export type AnthropicBlock = z.infer<typeof ContentBlock>;
export type ImageSource = z.infer<typeof ImageSource>;
export type ToolResultBlock = z.infer<typeof ToolResultBlock>;
export type ThinkingConfig = z.infer<typeof Thinking>;
export type ToolChoice = z.infer<typeof ToolChoice>;
