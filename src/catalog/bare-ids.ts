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
 * Who makes the models a provider-less name calls, by the name's family: code written for a maker's own API sends
 * its names (`gpt-4o-mini`, `claude-sonnet-4-5`, `gemini-2.5-flash`), and means the maker's model.
 */
const MAKERS: readonly (readonly [RegExp, string])[] = [
  [/^(gpt-|chatgpt-|o\d|text-embedding-|dall-e-|whisper-|tts-|omni-moderation-|codex-)/, 'openai'],
  [/^claude-/, 'anthropic'],
  [/^(gemini-|gemma-|imagen-|veo-)/, 'google'],
  [/^(mistral-|magistral-|ministral-|codestral|devstral-|pixtral-|open-mistral-|open-mixtral-)/, 'mistral'],
  [/^grok-/, 'x-ai'],
  [/^deepseek-/, 'deepseek'],
  [/^command-/, 'cohere'],
  [/^(kimi-|moonshot-)/, 'moonshotai'],
];

/** The provider whose own API a provider-less name comes from, when its family says so. */
export function makerOf(name: string): string | undefined {
  const lower = name.toLowerCase();
  return MAKERS.find(([family]) => family.test(lower))?.[1];
}

/**
 * The catalog model an id names: the model of that exact id, else the model a provider-less id names
 * (`gpt-4o-mini` → `openai/gpt-4o-mini`): its maker's (OpenAI's for `gpt-*` and `o*`, Anthropic's for `claude-*`,
 * Google's for `gemini-*`, ...) when this gateway can serve that one, else the one servable model of the name. None
 * servable: the maker's model, else the only one of the name, so that the refusal says what to configure. Several
 * servable and none the maker's (or none servable, several known and no maker among them) is a 404 listing them.
 * Candidates the endpoint does not take are dropped unless none fits, so that a model called on the wrong endpoint
 * is still named as such.
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
  const maker = makerOf(id);
  const own = maker === undefined ? undefined : candidates.find((model) => model.provider === maker);
  if (own && rules.servable(own)) return own;
  const servable = candidates.filter((model) => rules.servable(model));
  if (servable.length === 1) return servable[0];
  if (servable.length === 0 && own) return own;
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
