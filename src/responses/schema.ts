import { z } from 'zod';
import { refuseUnknownFields } from '../contracts/request-fields.ts';

// Items and parts stay loose: fields the translation does not read (ids, status, annotations) are accepted.
const InputText = z.object({ type: z.literal('input_text'), text: z.string() }).loose();
const OutputText = z.object({ type: z.literal('output_text'), text: z.string() }).loose();
const Refusal = z.object({ type: z.literal('refusal'), refusal: z.string() }).loose();
const InputImage = z
  .object({
    type: z.literal('input_image'),
    image_url: z.string().min(1).nullish(),
    file_id: z.string().nullish(),
    detail: z.enum(['low', 'high', 'auto', 'original']).optional(),
  })
  .loose();
/** Accepted by the schema so that the refusal names the part, rather than a union's mismatch. */
const OtherPart = z.object({ type: z.string() }).loose();

const Part = z.union([InputText, OutputText, Refusal, InputImage, OtherPart]);
export type Part = z.infer<typeof Part>;

const MessageItem = z
  .object({
    type: z.literal('message').optional(),
    role: z.enum(['user', 'assistant', 'system', 'developer']),
    content: z.union([z.string(), z.array(Part)]),
  })
  .loose();

const FunctionCallItem = z
  .object({
    type: z.literal('function_call'),
    call_id: z.string().min(1),
    name: z.string().min(1),
    arguments: z.string(),
    id: z.string().optional(),
  })
  .loose();

const FunctionCallOutputItem = z
  .object({
    type: z.literal('function_call_output'),
    call_id: z.string().min(1),
    output: z.union([z.string(), z.array(Part)]),
    id: z.string().optional(),
  })
  .loose();

const OtherItem = z.object({ type: z.string() }).loose();

export const InputItem = z.union([MessageItem, FunctionCallItem, FunctionCallOutputItem, OtherItem]);
export type InputItem = z.infer<typeof InputItem>;
export type MessageItem = z.infer<typeof MessageItem>;
export type FunctionCallItem = z.infer<typeof FunctionCallItem>;
export type FunctionCallOutputItem = z.infer<typeof FunctionCallOutputItem>;

const Tool = z
  .object({
    type: z.string(),
    name: z.string().min(1).optional(),
    description: z.string().nullish(),
    parameters: z.record(z.string(), z.unknown()).nullish(),
    strict: z.boolean().nullish(),
  })
  .loose();
export type Tool = z.infer<typeof Tool>;

const ToolChoice = z.union([
  z.enum(['none', 'auto', 'required']),
  z.object({ type: z.string(), name: z.string().optional() }).loose(),
]);
export type ToolChoice = z.infer<typeof ToolChoice>;

const TextFormat = z.discriminatedUnion('type', [
  z.object({ type: z.literal('text') }).loose(),
  z.object({ type: z.literal('json_object') }).loose(),
  z
    .object({
      type: z.literal('json_schema'),
      name: z.string().min(1),
      schema: z.record(z.string(), z.unknown()),
      description: z.string().optional(),
      strict: z.boolean().nullish(),
    })
    .loose(),
]);
export type TextFormat = z.infer<typeof TextFormat>;

/**
 * OpenAI's Responses request. `models` (fallbacks, as on /chat/completions) is the gateway's own; fields that
 * carry no meaning for a chat model (`include`, `truncation`, `prompt_cache_key`, `user`) are accepted and
 * ignored, and those the gateway cannot honour are refused by name in `request.ts`.
 */
export const ResponsesRequest = z
  .object({
    model: z.string().min(1).optional(),
    models: z.array(z.string().min(1)).optional(),
    input: z.union([z.string(), z.array(InputItem)]).optional(),
    instructions: z.string().nullish(),
    previous_response_id: z.string().min(1).nullish(),
    tools: z.array(Tool).optional(),
    tool_choice: ToolChoice.optional(),
    parallel_tool_calls: z.boolean().nullish(),
    text: z
      .object({ format: TextFormat.optional(), verbosity: z.enum(['low', 'medium', 'high']).nullish() })
      .loose()
      .optional(),
    max_output_tokens: z.number().int().positive().nullish(),
    temperature: z.number().min(0).max(2).nullish(),
    top_p: z.number().min(0).max(1).nullish(),
    metadata: z
      .record(z.string().max(64), z.string().max(512))
      .refine((m) => Object.keys(m).length <= 16, 'at most 16 keys')
      .nullish(),
    store: z.boolean().nullish(),
    stream: z.boolean().nullish(),
    reasoning: z
      .object({
        effort: z.enum(['none', 'minimal', 'low', 'medium', 'high', 'xhigh']).nullish(),
        summary: z.string().nullish(),
      })
      .loose()
      .nullish(),
    background: z.boolean().nullish(),
    conversation: z.unknown().optional(),
    prompt: z.unknown().optional(),
    include: z.array(z.string()).nullish(),
    truncation: z.enum(['auto', 'disabled']).nullish(),
    user: z.string().optional(),
    safety_identifier: z.string().optional(),
    prompt_cache_key: z.string().optional(),
    service_tier: z.string().nullish(),
    top_logprobs: z.number().int().nullish(),
    stream_options: z.object({ include_obfuscation: z.boolean().optional() }).loose().nullish(),
  })
  .loose();

export type ResponsesRequest = z.infer<typeof ResponsesRequest>;

/**
 * Every top-level field of OpenAI's legacy completions request (CreateCompletionRequest), and the gateway's own that
 * its adapter drops. Anything else is refused by name: forwarded, it could be billed at a price no hold covers.
 */
const COMPLETIONS_FIELDS: ReadonlySet<string> = new Set([
  'model',
  'prompt',
  'best_of',
  'echo',
  'frequency_penalty',
  'logit_bias',
  'logprobs',
  'max_tokens',
  'n',
  'presence_penalty',
  'seed',
  'stop',
  'stream',
  'stream_options',
  'suffix',
  'temperature',
  'top_p',
  'user',
  'models',
  'cache',
  'webhook_url',
]);

/**
 * The legacy completions request, served by instruct-era models only. One prompt per request (a list of one
 * text is taken; token-id prompts are not); the known fields go to the provider as they came. `suffix` is input
 * the provider bills like the prompt, and is held for as such.
 */
export const CompletionsRequest = z
  .object({
    model: z.string().min(1),
    prompt: z.union([z.string(), z.array(z.string()).length(1, 'one prompt per request')]),
    suffix: z.string().nullish(),
    max_tokens: z.number().int().positive().optional(),
    stream: z.boolean().nullish(),
    stream_options: z.object({ include_usage: z.boolean().optional() }).loose().nullish(),
    temperature: z.number().min(0).max(2).nullish(),
    top_p: z.number().min(0).max(1).nullish(),
    n: z.number().int().min(1).nullish(),
    best_of: z.number().int().min(1).nullish(),
  })
  .loose()
  .superRefine(refuseUnknownFields(COMPLETIONS_FIELDS));

export type CompletionsRequest = z.infer<typeof CompletionsRequest>;
