/**
 * What the price list does not say, inferred from what it does: model ids, price keys and descriptions. Each table
 * is data; classify.ts applies it. Patterns are tested against the lower-cased price-list id (so `openai/o3` on
 * OpenRouter and `global.openai.gpt-5.6-sol` on Bedrock are recognised too) and the lower-cased description.
 */
import type { CapabilityId } from './capabilities.ts';
import type { ApiFamily, Modality, Quirks } from './types.ts';

export interface ModelFacts {
  provider: string;
  /** Lower-cased price-list id. */
  id: string;
  /** Every price key of the model, in any of its dated or time-of-day entries. */
  priceKeys: ReadonlySet<string>;
  /** Lower-cased; empty when the price list has none. */
  description: string;
}

/** A rule applies when every criterion it names holds. */
export interface Matcher {
  providers?: readonly string[];
  model?: RegExp;
  describes?: RegExp;
  pricedBy?: string;
}

export const API_FAMILIES: Readonly<Record<string, ApiFamily>> = {
  anthropic: 'anthropic',
  google: 'gemini',
  local: 'local',
};

/** Capabilities of a text model unless a rule below says otherwise. */
export const CHAT_DEFAULTS: readonly CapabilityId[] = ['chat', 'streaming', 'function_calling', 'json_mode'];

/** First match wins; a model no rule matches is a chat model (the price list is mostly LLMs). */
export const MODALITY_RULES: readonly (Matcher & {
  modality: Modality;
  capabilities: readonly CapabilityId[];
})[] = [
  { model: /rerank/, modality: 'rerank', capabilities: ['rerank'] },
  { model: /embed/, modality: 'embedding', capabilities: ['embeddings'] },
  // Voyage AI's list holds its text embedding models only (its price_comments say so).
  { providers: ['voyageai'], modality: 'embedding', capabilities: ['embeddings'] },
  { model: /moderation/, modality: 'moderation', capabilities: ['moderation'] },
  // Speech-to-speech sessions (OpenAI realtime, Gemini Live, Nova Sonic, Grok Voice): reached over /v1/realtime.
  {
    model: /realtime|(^|[-.])live([-.]|$)|nova-(2-)?sonic|grok-voice/,
    modality: 'audio-stt',
    capabilities: ['realtime-transcription'],
  },
  { model: /whisper|transcri/, modality: 'audio-stt', capabilities: ['speech-to-text'] },
  // Priced per hour of input audio and nothing else: a transcription model (e.g. Voxtral Mini Transcribe).
  { pricedBy: 'input_audio_hours', modality: 'audio-stt', capabilities: ['speech-to-text'] },
  { model: /(^|[-/.])tts([-.]|$)/, modality: 'audio-tts', capabilities: ['text-to-speech'] },
  { model: /lyria/, modality: 'audio-tts', capabilities: ['text-to-music', 'async'] },
  { pricedBy: 'output_video_mtok', modality: 'video', capabilities: ['text-to-video', 'async'] },
  { model: /(^|[/.])(veo|sora)-/, modality: 'video', capabilities: ['text-to-video', 'async'] },
  {
    model: /(^|[-/.])image([-.]|$)|dall-e|imagen/,
    modality: 'image',
    capabilities: ['image-generation', 'image-editing'],
  },
  // Document OCR answers text but is not a chat model: it is served by POST /v1/ocr.
  { model: /(^|[-/.])ocr([-.]|$)/, modality: 'ocr', capabilities: ['ocr'] },
];

/** Families known to take images in chat messages, for models whose entry neither prices nor describes it. */
const VISION_MODELS = new RegExp(
  [
    'gpt-4o(?!.*(audio|search|transcribe|tts|realtime))',
    'gpt-4\\.1',
    'gpt-4\\.5',
    'gpt-4-turbo',
    'gpt-[5-9]',
    '(^|[/.])(o1(?!-mini|-preview)|o3(?!-mini)|o4)',
    'claude-(3|[a-z]+-[3-9]|[4-9])',
    'gemini',
    'gemma-?3(?!-1b)',
    'gemma-?4',
    'grok-(2-vision|vision|4)',
    'llama-?3\\.2-(11|90)b',
    'llama-?4',
    'pixtral',
    'mistral-medium-3',
    'mistral-small-3\\.[1-9]',
    'mistral-large-(3|2512)',
    '(^|[-_./])vl([-_.]|$)',
    'internvl',
    'qvq',
    'llava',
    'glm-4(\\.\\d)?v',
    'vision',
  ].join('|'),
);

/** Applied in order to text models that chat; `add` and `remove` edit CHAT_DEFAULTS. */
export const CAPABILITY_RULES: readonly (Matcher & {
  add?: readonly CapabilityId[];
  remove?: readonly CapabilityId[];
})[] = [
  { pricedBy: 'input_image_mtok', add: ['vision'] },
  { describes: /multi-?modal|vision|visual|image inputs?|text\+image/, add: ['vision'] },
  { model: VISION_MODELS, add: ['vision'] },
  // Search-grounded and research models answer from the web and take no tools.
  { providers: ['perplexity'], remove: ['function_calling'] },
  { model: /search|deep-research|^o1-(mini|preview)/, remove: ['function_calling'] },
  // Completion-era models: no tools, no JSON mode.
  {
    model: /^(ada|babbage|curie|davinci|text-davinci|gpt-3\.5-turbo-instruct)/,
    remove: ['function_calling', 'json_mode'],
  },
  // Safety classifiers served as chat models (Llama Guard, gpt-oss-safeguard).
  { model: /guard/, add: ['moderation'], remove: ['function_calling'] },
];

const OPENAI_REASONING = {
  reasoning: true,
  noSampling: true,
  maxTokensField: 'max_completion_tokens',
} as const satisfies Partial<Quirks>;

/** Every matching rule applies, in order, over { reasoning: false, noSampling: false, maxTokensField: max_tokens }. */
export const QUIRK_RULES: readonly (Matcher & { set: Partial<Quirks> })[] = [
  // OpenAI's o-series and gpt-5+ on OpenAI's own API (and Azure's copy of it) reject temperature/top_p and max_tokens.
  { providers: ['openai', 'azure'], model: /^(o[1-9]|codex-mini)/, set: OPENAI_REASONING },
  { providers: ['openai', 'azure'], model: /^gpt-[5-9]/, set: OPENAI_REASONING },
  // The same models resold by other hosts, which set their own parameter rules: the model still reasons.
  { model: /(^|[/.])(o[1-9](-|$)|gpt-[5-9])|gpt-oss/, set: { reasoning: true } },
  // Claude 3.7 and every Claude 4+ have extended thinking.
  { model: /claude-(3-7|3\.7|[a-z]+-[4-9]|[4-9])/, set: { reasoning: true } },
  // Gemini 2.5+ think by default (their speech, live and image variants do not answer with thoughts).
  { model: /gemini-(2\.5|[3-9])(?!.*(tts|live|image|embedding))/, set: { reasoning: true } },
  { model: /grok-(3-mini|4|build|code)(?!.*non-reasoning)/, set: { reasoning: true } },
  {
    model: /deepseek-(reasoner|r1)|(^|[-/.])r1([-.:]|$)|qwq|qvq|magistral|(?<!non-)reasoning|think/,
    set: { reasoning: true },
  },
  { describes: /reasoning model|always-on thinking/, set: { reasoning: true } },
];

export function applies(rule: Matcher, facts: ModelFacts): boolean {
  return (
    (!rule.providers || rule.providers.includes(facts.provider)) &&
    (!rule.model || rule.model.test(facts.id)) &&
    (!rule.describes || rule.describes.test(facts.description)) &&
    (!rule.pricedBy || facts.priceKeys.has(rule.pricedBy))
  );
}
