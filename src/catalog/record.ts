import { z } from 'zod';
import { type CatalogModel, MODALITIES, type TokenRates } from './types.ts';

export const QuirksRecord = z.object({
  reasoning: z.boolean(),
  noSampling: z.boolean(),
  nativeFormat: z.enum(['anthropic', 'gemini']).nullable(),
  maxTokensField: z.enum(['max_tokens', 'max_completion_tokens']),
});

const usd = z.number().nullable();

/** A model as GET /v1/models lists it: the OpenAI model-list entry, extended. */
export const ModelRecord = z.object({
  id: z.string(),
  object: z.literal('model'),
  created: z.number().int(),
  owned_by: z.string(),
  name: z.string(),
  provider: z.string(),
  modality: z.enum(MODALITIES),
  context_window: z.number().int().nullable(),
  max_output_tokens: z.number().int().nullable(),
  pricing: z.object({
    input_per_million_usd: usd,
    output_per_million_usd: usd,
    cached_input_per_million_usd: usd,
    cache_write_per_million_usd: usd,
    /**
     * Higher rates past a prompt size, ascending: a request whose prompt (cache reads and writes included) is larger
     * than `above_input_tokens` is held and charged at that tier's rates for all of its tokens.
     */
    tiers: z
      .array(
        z.object({
          above_input_tokens: z.number().int(),
          input_per_million_usd: usd,
          output_per_million_usd: usd,
          cached_input_per_million_usd: usd,
          cache_write_per_million_usd: usd,
        }),
      )
      .optional(),
    /** Dollars per one unit for models priced other than by the token (per image, audio minute, character). */
    per_unit_usd: z.record(z.string(), z.number()).optional(),
    /** How the price list's rates became these figures (tiers, dated and time-of-day rates, rounding). */
    notes: z.array(z.string()),
  }),
  capabilities: z.array(z.string()),
  quirks: QuirksRecord,
  available: z.boolean(),
  /**
   * Why the model is not available here (`set OPENAI_API_KEY`, its provider's model list not naming it, no price);
   * null when it is.
   */
  availability_reason: z.string().nullable(),
  deprecated: z.boolean(),
  description: z.string().nullable(),
});
export type ModelRecord = z.infer<typeof ModelRecord>;

/**
 * Nano-dollars as a JSON number of dollars. Both operands are exact doubles (prices are far below 2^53 nanos), so
 * the quotient is the double nearest the exact decimal, which JSON prints as that decimal (2500000000n → 2.5).
 */
export const nanosToUsd = (nanos: bigint | null): number | null =>
  nanos === null ? null : Number(nanos) / 1e9;

const usdRates = (rates: TokenRates) => ({
  input_per_million_usd: nanosToUsd(rates.inputNanosPerMillion),
  output_per_million_usd: nanosToUsd(rates.outputNanosPerMillion),
  cached_input_per_million_usd: nanosToUsd(rates.cachedInputNanosPerMillion),
  cache_write_per_million_usd: nanosToUsd(rates.cacheWriteNanosPerMillion),
});

/**
 * The list entry of a model; whether this gateway can serve it, and why not, is the caller's to say (it knows the
 * adapters and the providers' lists).
 */
export function modelRecord(
  model: CatalogModel,
  availability: { available: boolean; reason: string | null },
): ModelRecord {
  return {
    id: model.id,
    object: 'model',
    created: 0,
    owned_by: model.provider,
    name: model.name,
    provider: model.provider,
    modality: model.modality,
    context_window: model.contextWindow,
    max_output_tokens: model.maxOutputTokens,
    pricing: {
      ...usdRates(model.prices),
      ...(model.prices.tiers && {
        tiers: model.prices.tiers.map((tier) => ({
          above_input_tokens: tier.aboveInputTokens,
          ...usdRates(tier),
        })),
      }),
      ...(model.prices.perUnitNanos && {
        per_unit_usd: Object.fromEntries(
          Object.entries(model.prices.perUnitNanos).map(([unit, nanos]) => [unit, Number(nanos) / 1e9]),
        ),
      }),
      notes: model.priceNotes,
    },
    capabilities: model.capabilities,
    quirks: model.quirks,
    available: availability.available,
    availability_reason: availability.reason,
    deprecated: model.deprecated,
    description: model.description,
  };
}
