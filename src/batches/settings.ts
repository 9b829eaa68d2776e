import { findNamedModel } from '../catalog/bare-ids.ts';
import type { Catalog, CatalogModel } from '../catalog/types.ts';
import type { ChatCompletionRequest } from '../chat/request.ts';
import type { Discount } from '../contracts/money.ts';
import type { EmbeddingsRequest } from '../modalities/embeddings/request.ts';
import { BATCH_API_PROVIDERS, batchApiOf } from '../providers/batch-apis.ts';
import { isAvailable } from '../providers/registry.ts';

/** What a batch line whose provider has no batch API gets: run at full price, the fee absorbing the discount, or refused. */
export type BatchFallback = 'full_price' | 'refuse';

export interface BatchSettings {
  /** Providers whose own batch API serves their lines. */
  apis: ReadonlySet<string>;
  fallback: BatchFallback;
  /** How often an upstream batch is asked how it stands. */
  pollMs: number;
}

export class BatchSettingsError extends Error {
  override readonly name = 'BatchSettingsError';
}

/**
 * GATEWAY_BATCH_APIS (providers whose batch API is used, comma-separated, or `none`; default every provider the
 * gateway has a batch client for), GATEWAY_BATCH_FALLBACK (`full_price`, the default, or `refuse`) and
 * GATEWAY_BATCH_POLL_MS (default 30 s).
 */
export function batchSettings(env: NodeJS.ProcessEnv): BatchSettings {
  const listed = env.GATEWAY_BATCH_APIS?.trim();
  const names =
    listed === undefined || listed === ''
      ? [...BATCH_API_PROVIDERS]
      : listed === 'none'
        ? []
        : listed.split(',').map((name) => name.trim());
  const unknown = names.filter((name) => !BATCH_API_PROVIDERS.includes(name));
  if (unknown.length > 0) {
    throw new BatchSettingsError(
      `GATEWAY_BATCH_APIS: no batch API is spoken for ${unknown.join(', ')} (known: ${BATCH_API_PROVIDERS.join(', ')}, or none)`,
    );
  }
  const fallback = env.GATEWAY_BATCH_FALLBACK?.trim() || 'full_price';
  if (fallback !== 'full_price' && fallback !== 'refuse') {
    throw new BatchSettingsError(`GATEWAY_BATCH_FALLBACK: must be full_price or refuse, not '${fallback}'`);
  }
  const poll = Number(env.GATEWAY_BATCH_POLL_MS);
  const pollMs = Number.isSafeInteger(poll) && poll >= 10 ? poll : 30_000;
  return { apis: new Set(names), fallback, pollMs };
}

/** The model a line names, for its endpoint; undefined for `auto`, an omitted model or an unknown one. */
export function lineModel(
  catalog: Catalog,
  env: NodeJS.ProcessEnv,
  endpoint: string,
  id: unknown,
): CatalogModel | undefined {
  if (typeof id !== 'string' || id === 'auto' || id.startsWith('auto/')) return undefined;
  const modality = endpoint === '/v1/embeddings' ? 'embedding' : 'text';
  return findNamedModel(catalog, id, {
    servable: (model) => isAvailable(model, env) || model.provider === 'local',
    fits: (model) => model.modality === modality,
  });
}

/** Whether the line's model goes to its provider's batch API: one is spoken for it and the gateway can reach it. */
export function servedByBatchApi(
  settings: BatchSettings,
  model: CatalogModel | undefined,
  endpoint: string,
  env: NodeJS.ProcessEnv,
): boolean {
  return (
    endpoint === '/v1/chat/completions' &&
    model !== undefined &&
    settings.apis.has(model.provider) &&
    batchApiOf(model) !== undefined &&
    isAvailable(model, env)
  );
}

/**
 * The discount of a line run through the ordinary path: half price when the line can only be served by the
 * built-in models (no provider is paid), else the batch discount out of the fee, never below the provider's cost.
 */
export function gatewayLineDiscount(
  catalog: Catalog,
  env: NodeJS.ProcessEnv,
  endpoint: string,
  body: ChatCompletionRequest | EmbeddingsRequest,
  fallbacks: Record<string, string[]>,
): Discount {
  const model = (body as { model?: unknown }).model;
  const given = (body as { models?: unknown }).models;
  const others = Array.isArray(given)
    ? given
    : typeof model === 'string' && Object.hasOwn(fallbacks, model)
      ? (fallbacks[model] ?? [])
      : [];
  const ids = [model, ...others];
  const local = ids.every((id) => lineModel(catalog, env, endpoint, id)?.provider === 'local');
  return local ? 'batch' : 'batch_fee';
}
