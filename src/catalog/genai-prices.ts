import { type MatchLogic, type ModelInfo, type Provider, waitForUpdate } from '@pydantic/genai-prices';

/**
 * The price list bundled with @pydantic/genai-prices. The package exposes its provider list only through
 * `waitForUpdate()`, a promise that is already resolved with the bundled data unless `updatePrices` was called
 * (this gateway never does: prices change with a dependency update, not behind its back). Awaiting it here, once,
 * keeps `buildCatalog()` synchronous.
 */
export const bundledProviders: readonly Provider[] = await loadBundledProviders();

async function loadBundledProviders(): Promise<Provider[]> {
  const providers = await waitForUpdate();
  if (!providers) throw new Error('@pydantic/genai-prices has no bundled provider data');
  return providers;
}

/**
 * The id to send upstream. A price list id is usually the provider's own, but some are short names whose match
 * rule names the real one (Fireworks' `deepseek-r1-0528` is called `accounts/fireworks/models/deepseek-r1-0528`,
 * Mistral's `codestral` matches `codestral-latest`): when the id does not satisfy its own rule, the rule's first
 * exact name is used.
 */
export function upstreamModelId(model: ModelInfo): string {
  if (matches(model.match, model.id)) return model.id;
  return firstEquals(model.match) ?? model.id;
}

/** Price entries that stand for a family of ids rather than a model one can call (fine-tune price templates). */
export function isPriceTemplate(model: ModelInfo): boolean {
  return model.id.startsWith('ft:') || model.id.includes('.ft-');
}

function matches(logic: MatchLogic, id: string): boolean {
  const s = id.toLowerCase();
  if ('or' in logic) return logic.or.some((l) => matches(l, id));
  if ('and' in logic) return logic.and.every((l) => matches(l, id));
  if ('equals' in logic) return s === logic.equals.toLowerCase();
  if ('starts_with' in logic) return s.startsWith(logic.starts_with.toLowerCase());
  if ('ends_with' in logic) return s.endsWith(logic.ends_with.toLowerCase());
  if ('contains' in logic) return s.includes(logic.contains.toLowerCase());
  return new RegExp(logic.regex).test(id);
}

function firstEquals(logic: MatchLogic): string | undefined {
  if ('equals' in logic) return logic.equals;
  if ('or' in logic) {
    for (const l of logic.or) {
      const found = firstEquals(l);
      if (found) return found;
    }
  }
  return undefined;
}
