import type { PriceBook } from '../../commands/budget/markup.ts';
import type { LiveSubAccount } from '../accounts/live-state.ts';
import { matchesModel } from '../accounts/reseller-settings.ts';

/**
 * The sub-account's price book for one model (docs/billing.md, Reselling): the first override whose pattern
 * matches the model's catalog id, else the sub-account's own markup. Read from the live state at the hold, so a
 * change applies from the next request and never to a request already held.
 */
export function priceBookFor(sub: LiveSubAccount, modelId: string | undefined): PriceBook {
  const override =
    modelId === undefined ? undefined : sub.priceOverrides.find((o) => matchesModel(o.model, modelId));
  return {
    markupBasisPoints: override?.markupBasisPoints ?? sub.markupBasisPoints,
    revision: sub.priceBookRevision,
  };
}
