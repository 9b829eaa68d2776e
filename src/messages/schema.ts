import { z } from 'zod';

// Blocks stay loose: fields the translation does not read (cache_control, citations) are accepted and dropped.
const TextBlock = z.object({ type: z.literal('text'), text: z.string() }).loose();

const ImageSource = z.discriminatedUnion('type', [
  z.object({ type: z.literal('base64'), media_type: z.string().min(1), data: z.string() }).loose(),
  z.object({ type: z.literal('url'), url: z.string().min(1) }).loose(),
]);
const ImageBlock = z.object({ type: z.literal('image'), source: ImageSource }).loose();

const ToolUseBlock = z
  .object({
    type: z.literal('tool_use'),
    id: z.string().min(1),
    name: z.string().min(1),
    input: z.record(z.string(), z.unknown()),
  })
  .loose();

const ToolResultBlock = z
  .object({
    type: z.literal('tool_result'),
    tool_use_id: z.string().min(1),
    content: z.union([z.string(), z.array(z.discriminatedUnion('type', [TextBlock, ImageBlock]))]).optional(),
    is_error: z.boolean().optional(),
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

/** Anthropic's Messages request; fields it defines that the gateway cannot use are accepted and dropped. */
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
    /** The gateway's fallbacks, as on /chat/completions. */
    models: z.array(z.string().min(1)).optional(),
  })
  .loose();

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
