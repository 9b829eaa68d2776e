import { findNamedModel } from '../catalog/bare-ids.ts';
import { endpointOf } from '../catalog/capabilities.ts';
import { findModel, modelsOf } from '../catalog/extra-models.ts';
import type { Catalog, CatalogModel, Modality } from '../catalog/types.ts';
import { RequestRefused } from '../contracts/errors.ts';
import type { ModalityUpstream } from '../contracts/modality.ts';
import { providerEnv } from '../provider-env.ts';
import { notOffered } from '../providers/offered-models.ts';
import { configurationMissing, modalityUpstreamOf } from '../providers/registry.ts';

/** What an endpoint serves and which adapter speaks to a model of it (undefined: none does yet). */
export interface EndpointSpec<A> {
  path: string;
  modality: Modality;
  adapterOf(model: CatalogModel): A | undefined;
  /** Why the model cannot be billed on this endpoint, or undefined when it can. */
  unpriced(model: CatalogModel): string | undefined;
}

export interface ModalityTarget<A> {
  model: CatalogModel;
  upstream: ModalityUpstream;
  adapter: A;
}

export interface ModelSource {
  catalog: Catalog;
  env: NodeJS.ProcessEnv;
  timeoutMs: number;
}

/** The model a request names, with where and how to reach it; refusals name what is wrong and what to do. */
export function resolveModalityModel<A>(
  source: ModelSource,
  endpoint: EndpointSpec<A>,
  id: string,
): ModalityTarget<A> {
  const model = findNamedModel(source.catalog, id, {
    servable: (candidate) => servable(source.env, endpoint, candidate),
    fits: (candidate) => candidate.modality === endpoint.modality,
  });
  if (!model) {
    throw new RequestRefused(
      'model_not_found',
      `The model '${id}' does not exist; see GET /v1/models?modality=${endpoint.modality}`,
    );
  }
  if (model.modality !== endpoint.modality) {
    const right = endpointOf(model.capabilities);
    throw new RequestRefused(
      'invalid',
      `'model': ${model.id} is ${kind(model.modality)}, not ${kind(endpoint.modality)}; call it with ${right.method} ${right.path}`,
    );
  }
  const unpriced = endpoint.unpriced(model);
  if (unpriced) throw new RequestRefused('invalid', `'model': ${model.id} ${unpriced}`);
  const adapter = endpoint.adapterOf(model);
  const upstream = modalityUpstreamOf(model, source.env, source.timeoutMs);
  if (!adapter || !upstream) {
    const why = adapter
      ? `set ${providerEnv(model.provider).keyVars.join(' or ')}`
      : `no adapter speaks ${model.provider}'s ${endpoint.path.replace(/^\/v1\//, '')} API yet`;
    throw new RequestRefused('invalid', `'model': ${model.id} is not available on this gateway (${why})`);
  }
  const unoffered = notOffered(model, source.env);
  if (unoffered) {
    throw new RequestRefused(
      'model_not_found',
      `'model': ${model.id} is not available on this gateway: ${unoffered}`,
    );
  }
  return { model, upstream, adapter };
}

const kind = (modality: Modality) => `${/^[aeiou]/.test(modality) ? 'an' : 'a'} ${modality} model`;

/** Whether the endpoint can serve and bill the model here: an adapter, a key, an address, a price, its provider's offer. */
export function servable<A>(env: NodeJS.ProcessEnv, endpoint: EndpointSpec<A>, model: CatalogModel): boolean {
  return model.modality === endpoint.modality && unavailability(env, endpoint, model) === undefined;
}

/** Why the endpoint cannot serve and bill the model (of its modality) here, or undefined when it can. */
export function unavailability<A>(
  env: NodeJS.ProcessEnv,
  endpoint: EndpointSpec<A>,
  model: CatalogModel,
): string | undefined {
  const unpriced = endpoint.unpriced(model);
  if (unpriced) return unpriced;
  if (endpoint.adapterOf(model) === undefined) {
    return `no adapter speaks ${model.provider}'s ${endpoint.path.replace(/^\/v1\//, '')} API yet`;
  }
  if (modalityUpstreamOf(model, env, 0) === undefined) {
    return configurationMissing(model, env) ?? `set ${providerEnv(model.provider).baseUrlVar}`;
  }
  return notOffered(model, env);
}

/**
 * The model an endpoint uses when the request names none: the first of `preferred`, then of the catalog's models of
 * the modality, that this gateway can reach and bill.
 */
export function defaultModelId<A>(
  source: ModelSource,
  endpoint: EndpointSpec<A>,
  preferred: string[],
): string {
  const listed = modelsOf(source.catalog, endpoint.modality);
  // The built-in local models (keyword rules, a lexical embedding) serve only when no provider can.
  const candidates = [
    ...preferred.map((id) => findModel(source.catalog, id)),
    ...listed.filter((model) => model.provider !== 'local'),
    ...listed.filter((model) => model.provider === 'local'),
  ];
  const usable = candidates.find(
    (model) => model !== undefined && !model.deprecated && servable(source.env, endpoint, model),
  );
  if (!usable) {
    throw new RequestRefused(
      'invalid',
      `'model': no ${endpoint.modality} model is available on this gateway; name one (GET /v1/models?modality=${endpoint.modality}) and configure its provider's key`,
    );
  }
  return usable.id;
}
