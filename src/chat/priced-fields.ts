import type { CatalogModel } from '../catalog/types.ts';
import { invalidField } from '../contracts/errors.ts';
import type { ChatCompletionRequest } from './request.ts';

/**
 * Tiers billed at the standard rates the price list gives. `auto` runs at the tier the operator's provider project
 * is set to, as a request that names no tier does: the gateway's prices assume that is the default tier. `flex`,
 * `scale` and `priority` have rates of their own, which the price list does not give.
 */
const STANDARD_TIERS = new Set(['auto', 'default']);

const given = (value: unknown) => value !== undefined && value !== null;

function refuseAudioOutput(body: ChatCompletionRequest): void {
  const { modalities, audio } = body as { modalities?: unknown; audio?: unknown };
  const field = Array.isArray(modalities) && modalities.some((m) => m !== 'text') ? 'modalities' : 'audio';
  if (field === 'modalities' || given(audio)) {
    throw invalidField(
      field,
      'only text output is served on /chat/completions (audio output is billed per audio token, which is not held for); use /v1/audio/speech',
    );
  }
}

/** Audio input is billed per audio token, at rates the price list's per-token text prices do not cover. */
function refuseAudioInput(messages: ChatCompletionRequest['messages']): void {
  for (const [i, message] of messages.entries()) {
    if (!Array.isArray(message.content)) continue;
    const j = message.content.findIndex((part) => part.type === 'input_audio');
    if (j >= 0) {
      throw invalidField(
        `messages[${i}].content[${j}].type`,
        "'input_audio' is billed per audio token, at rates the gateway does not hold for; transcribe it first with /v1/audio/transcriptions",
      );
    }
  }
}

function refuseTier(tier: string | null | undefined): void {
  if (!given(tier) || STANDARD_TIERS.has(tier as string)) return;
  throw invalidField(
    'service_tier',
    `'${tier}' is billed at rates of its own, which the price list does not give; send auto or default (standard rates), or leave it out`,
  );
}

/**
 * Function tools cost the tokens of their definitions and calls. A built-in tool (`web_search_preview`,
 * `code_interpreter`, another provider's browser or search) is billed per call, which the gateway cannot price.
 * A `custom` tool is billed as tokens too, but only the OpenAI format carries it: another adapter would drop it.
 */
function refuseBuiltInTools(model: CatalogModel, tools: unknown[] | undefined): void {
  for (const [i, tool] of (tools ?? []).entries()) {
    const type = (tool as { type?: unknown } | null)?.type;
    if (type === undefined || type === 'function') continue;
    if (type === 'custom' && model.api === 'openai') continue;
    const named = typeof type === 'string' ? `'${type}'` : 'this type';
    throw invalidField(
      `tools[${i}].type`,
      type === 'custom'
        ? `custom tools are served only by models reached in OpenAI's format, not ${model.id}; use a function tool`
        : `${named} is a built-in tool its provider bills per call, which the gateway cannot price; only function tools are served`,
    );
  }
}

const CACHE_WRITE =
  'asks the provider to write a prompt cache, billed above the input rate, which the chat format reports no usage for; send it to /v1/messages, which holds and charges cache writes';

/**
 * `cache_control` is Anthropic's, which OpenAI-compatible hosts in front of Anthropic or Gemini models (OpenRouter)
 * take on messages, their parts and tools: each write is billed at 1.25x input or more.
 */
function refuseCacheWrites(body: ChatCompletionRequest): void {
  for (const [i, message] of body.messages.entries()) {
    if (given((message as { cache_control?: unknown }).cache_control))
      throw invalidField(`messages[${i}].cache_control`, CACHE_WRITE);
    if (!Array.isArray(message.content)) continue;
    const j = message.content.findIndex((part) => given(part.cache_control));
    if (j >= 0) throw invalidField(`messages[${i}].content[${j}].cache_control`, CACHE_WRITE);
  }
  for (const [i, tool] of (body.tools ?? []).entries()) {
    if (given((tool as { cache_control?: unknown } | null)?.cache_control))
      throw invalidField(`tools[${i}].cache_control`, CACHE_WRITE);
  }
}

/**
 * Fields a provider bills beyond the tokens a hold is priced on, refused before anything is held or sent: audio
 * output and input, web search, a service tier at other rates, built-in tools, prompt-cache writes. Unknown fields
 * are refused by the schema.
 */
export function refuseUnpricedFields(model: CatalogModel, body: ChatCompletionRequest): void {
  refuseAudioOutput(body);
  refuseAudioInput(body.messages);
  if (given((body as { web_search_options?: unknown }).web_search_options)) {
    throw invalidField(
      'web_search_options',
      'web search is billed per call by the provider, which this gateway does not hold for',
    );
  }
  refuseTier(body.service_tier);
  refuseBuiltInTools(model, body.tools);
  refuseCacheWrites(body);
}
