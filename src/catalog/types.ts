export type Modality =
  | 'text'
  | 'image'
  | 'audio-stt'
  | 'audio-tts'
  | 'video'
  | 'music'
  | '3d'
  | 'embedding'
  | 'rerank'
  | 'moderation'
  | 'translation'
  | 'object-detection'
  | 'ocr';
export const MODALITIES = [
  'text',
  'image',
  'audio-stt',
  'audio-tts',
  'video',
  'music',
  '3d',
  'embedding',
  'rerank',
  'moderation',
  'translation',
  'object-detection',
  'ocr',
] as const satisfies readonly Modality[];

/** Which adapter speaks to the model: most providers are reached through the OpenAI-compatible one. */
export type ApiFamily = 'openai' | 'anthropic' | 'gemini' | 'local';

/** Nano-dollars per million tokens; null where the price list gives no usable per-token rate. */
export interface TokenRates {
  inputNanosPerMillion: bigint | null;
  outputNanosPerMillion: bigint | null;
  cachedInputNanosPerMillion: bigint | null;
  cacheWriteNanosPerMillion: bigint | null;
}

/**
 * The rates of a request whose prompt is larger than `aboveInputTokens` (all its input, cache reads and writes
 * included, as the provider counts it): they replace the base rates for every token of that request.
 */
export interface PriceTier extends TokenRates {
  aboveInputTokens: number;
}

/** The base rates, and the tiers above them; nano-dollars per million units. */
export interface CatalogPrices extends TokenRates {
  /** Higher rates past a prompt size (Gemini 2.5 Pro above 200k tokens), by ascending `aboveInputTokens`. */
  tiers?: readonly PriceTier[];
  /**
   * Prices in a unit other than tokens, as nano-dollars per one unit, keyed by what is counted: `image`,
   * `image:1024x1024:hd`, `audio_minute`, `character`, `video_second`, `track`, `search_unit`, ...
   */
  perUnitNanos?: Readonly<Record<string, bigint>>;
}

export interface Quirks {
  reasoning: boolean;
  /** Rejects temperature and top_p. */
  noSampling: boolean;
  /** The provider's own message format, when its adapter is not the OpenAI-compatible one. */
  nativeFormat: 'anthropic' | 'gemini' | null;
  maxTokensField: 'max_tokens' | 'max_completion_tokens';
}

export interface CatalogModel {
  /** `<provider id>/<model id>`, e.g. openai/gpt-4o, anthropic/claude-sonnet-4-5, local/echo. */
  id: string;
  /** The genai-prices provider id (openai, anthropic, google, x-ai, huggingface_novita, ...), or local. */
  provider: string;
  /** What is sent upstream as `model`. */
  providerModelId: string;
  name: string;
  api: ApiFamily;
  modality: Modality;
  contextWindow: number | null;
  maxOutputTokens: number | null;
  prices: CatalogPrices;
  /** How the price list's rates were reduced to the figures above (tiers, dated or time-of-day rates, rounding). */
  priceNotes: string[];
  /** Ids from the capability vocabulary (capabilities.ts); the first is the model's main use. */
  capabilities: string[];
  quirks: Quirks;
  deprecated: boolean;
  description: string | null;
}

export interface CatalogFilter {
  modality?: Modality;
  provider?: string;
}

export interface Catalog {
  all(): CatalogModel[];
  get(id: string): CatalogModel | undefined;
  list(filter: CatalogFilter): CatalogModel[];
  providers(): string[];
}
