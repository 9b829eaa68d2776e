import type { ResellerSettings } from '../../commands/subaccount/decide.ts';
import type { LiveSubAccount } from './live-state.ts';

/** A sub-account's reseller settings as the API takes them (`POST`/`PATCH /v1/sub-accounts`). */
export interface ResellerInput {
  markup_percent?: number;
  price_overrides?: { model: string; markup_percent: number }[];
  spend_cap_reset?: 'daily' | 'weekly' | 'monthly' | null;
  rate_limit_tpm?: number | null;
  allowed_models?: string[] | null;
}

/** Percent to hundredths of a percent; the API takes at most two decimals, so this is exact. */
export const basisPoints = (percent: number): number => Math.round(percent * 100);

/** The settings a command records, from what the API was given (a field not given is left as it is). */
export function resellerSettings(input: ResellerInput, accountTpm: number | null): ResellerSettings {
  const tpm = input.rate_limit_tpm;
  return {
    ...(input.markup_percent === undefined ? {} : { markupBasisPoints: basisPoints(input.markup_percent) }),
    ...(input.price_overrides === undefined
      ? {}
      : {
          priceOverrides: input.price_overrides.map((o) => ({
            model: o.model,
            markupBasisPoints: basisPoints(o.markup_percent),
          })),
        }),
    ...(input.spend_cap_reset === undefined ? {} : { spendCapReset: input.spend_cap_reset }),
    // A sub-account's token limit never exceeds its account's own.
    ...(tpm === undefined ? {} : { rateLimitTpm: cappedTpm(tpm, accountTpm) }),
    ...(input.allowed_models === undefined ? {} : { allowedModels: input.allowed_models }),
  };
}

/**
 * A sub-account's tokens-per-minute limit in force: its own, never above its account's (null: no limit of its own;
 * the account's, when it has one, still counts the sub-account's tokens with all its others').
 */
export function cappedTpm(own: number | null, accountTpm: number | null): number | null {
  return own === null || accountTpm === null ? own : Math.min(own, accountTpm);
}

/** The reseller settings as the API shows them. */
export function resellerView(sub: LiveSubAccount) {
  return {
    markup_percent: sub.markupBasisPoints / 100,
    price_overrides: sub.priceOverrides.map((o) => ({
      model: o.model,
      markup_percent: o.markupBasisPoints / 100,
    })),
    spend_cap_reset: sub.spendCapReset,
    rate_limit_tpm: sub.rateLimitTpm,
    allowed_models: sub.allowedModels,
  };
}

/**
 * Whether a model id matches a pattern: `*` stands for any run of characters, anything else for itself, ignoring
 * case (model ids are matched ignoring case everywhere). `openai/*` matches every OpenAI model, `*mini*` every mini.
 */
export function matchesModel(pattern: string, modelId: string): boolean {
  const parts = pattern.toLowerCase().split('*');
  const id = modelId.toLowerCase();
  const [first = '', ...rest] = parts;
  if (rest.length === 0) return id === first;
  if (!id.startsWith(first)) return false;
  let at = first.length;
  const last = rest.pop() ?? '';
  for (const part of rest) {
    const found = id.indexOf(part, at);
    if (found < 0) return false;
    at = found + part.length;
  }
  return id.length - at >= last.length && id.endsWith(last);
}
