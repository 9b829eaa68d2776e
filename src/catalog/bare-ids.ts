import { RequestRefused } from '../contracts/errors.ts';
import { extraCatalogModels, findModel } from './extra-models.ts';
import type { Catalog, CatalogModel } from './types.ts';

/** What a model is called without its provider: `openai/gpt-4o-mini` → `gpt-4o-mini`, lower-cased. */
const bareName = (id: string) => id.slice(id.indexOf('/') + 1).toLowerCase();

/** Candidates listed in an ambiguous id's refusal, at most. */
const LISTED = 10;

const indexes = new WeakMap<Catalog, Map<string, CatalogModel[]>>();

function indexOf(catalog: Catalog): Map<string, CatalogModel[]> {
  let index = indexes.get(catalog);
  if (!index) {
    index = new Map();
    const known = new Set<string>();
    for (const model of [...catalog.all(), ...extraCatalogModels]) {
      if (known.has(model.id.toLowerCase())) continue;
      known.add(model.id.toLowerCase());
      const name = bareName(model.id);
      index.set(name, [...(index.get(name) ?? []), model]);
    }
    indexes.set(catalog, index);
  }
  return index;
}

/**
 * The catalog models a provider-less id names, as code written for one provider's API sends it: `gpt-4o-mini`
 * names `openai/gpt-4o-mini` and any other provider's `…/gpt-4o-mini`; `openai/gpt-4o-mini` also names
 * `openrouter/openai/gpt-4o-mini`. Matched without regard to case.
 */
export function modelsNamed(catalog: Catalog, name: string): CatalogModel[] {
  return indexOf(catalog).get(name.toLowerCase()) ?? [];
}

export interface NamedModelRules {
  /** Whether this gateway can serve the model where it is asked for (a key, an adapter, a price). */
  servable(model: CatalogModel): boolean;
  /** The models the endpoint takes (its modality); the others are candidates only when none fits. */
  fits?(model: CatalogModel): boolean;
}

/**
 * The catalog model an id names: the model of that exact id, else the one model a provider-less id names
 * (`gpt-4o-mini` → `openai/gpt-4o-mini`). When several share the name, the one this gateway can serve wins;
 * several servable (or none servable and several known) is a 404 listing them. Candidates the endpoint does not
 * take are dropped unless none fits, so that a model called on the wrong endpoint is still named as such.
 */
export function findNamedModel(
  catalog: Catalog,
  id: string,
  rules: NamedModelRules,
): CatalogModel | undefined {
  const exact = findModel(catalog, id);
  if (exact) return exact;
  const named = modelsNamed(catalog, id);
  const fitting = rules.fits ? named.filter((model) => rules.fits?.(model)) : named;
  const candidates = fitting.length > 0 ? fitting : named;
  const servable = candidates.filter((model) => rules.servable(model));
  if (servable.length === 1) return servable[0];
  if (servable.length === 0 && candidates.length === 1) return candidates[0];
  if (candidates.length === 0) return undefined;
  const listed = (servable.length > 1 ? servable : candidates).map((model) => model.id);
  const shown = listed.slice(0, LISTED).join(', ');
  const more = listed.length > LISTED ? ` and ${listed.length - LISTED} more` : '';
  throw new RequestRefused(
    'model_not_found',
    `The model '${id}' is ambiguous: it names ${listed.length} models; did you mean ${shown}${more}? Name one with its provider`,
  );
}
