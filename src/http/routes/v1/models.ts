import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { KeyHolder } from '../../../accounts/live-state.ts';
import { allowsModel } from '../../../accounts/model-access.ts';
import { findNamedModel } from '../../../catalog/bare-ids.ts';
import { CAPABILITIES } from '../../../catalog/capabilities.ts';
import { ModelRecord, modelRecord } from '../../../catalog/record.ts';
import { SchemaBlock, schemaBlock } from '../../../catalog/schema-block.ts';
import { type Catalog, type CatalogModel, MODALITIES } from '../../../catalog/types.ts';
import { RequestRefused } from '../../../contracts/errors.ts';
import { JOB_KINDS } from '../../../jobs/kinds.ts';
import { jobEndpoint } from '../../../jobs/service.ts';
import { availabilityOf, type ModalityEndpoints } from '../../../modalities/availability.ts';
import { endpointDefault } from './model-defaults.ts';

const ModelList = z.object({ object: z.literal('list'), data: z.array(ModelRecord) });
const ModelDetail = ModelRecord.extend({ schema: SchemaBlock });
const CacheCapability = z.object({
  modes: z.record(z.string(), z.string()),
  default_mode: z.literal('auto'),
  ttl_seconds: z.number(),
  discount_percent: z.number(),
  semantic: z.object({
    available: z.boolean(),
    embedding_model: z.string().nullable(),
    threshold: z.number(),
  }),
});
type CacheCapability = z.infer<typeof CacheCapability>;

const CapabilityList = z.object({
  object: z.literal('list'),
  data: z.array(
    z.object({
      id: z.string(),
      description: z.string(),
      endpoint: z.object({ method: z.enum(['GET', 'POST']), path: z.string() }),
      /** The model the endpoint uses when a request names none, on this gateway now; null when it needs one. */
      default_model: z.string().nullable(),
    }),
  ),
  /** The spec's `{mcp_url}`: the tool-protocol server ([mcp.md](docs/mcp.md)). */
  mcp_url: z.string(),
  /** What the response cache does on this gateway ([cache.md](docs/cache.md)). */
  cache: CacheCapability.optional(),
});

/** The asynchronous jobs' endpoints (video, music, 3D), which serve models of their own modalities. */
const JOB_ENDPOINTS: ModalityEndpoints = Object.fromEntries(
  Object.values(JOB_KINDS).map((kind) => [kind.catalogModality, jobEndpoint(kind)]),
);

const notFound = (id: string) =>
  new RequestRefused(
    'model_not_found',
    `The model '${id}' does not exist; ids are <provider>/<model>, see GET /v1/models`,
  );

/**
 * The model catalog. Model ids contain a slash and some provider model ids more (OpenRouter's
 * `openrouter/openai/gpt-4o`), so the detail routes take the rest of the path and split it on its first slash.
 */
export const modelRoutes =
  (
    catalog: Catalog,
    env: NodeJS.ProcessEnv,
    publicBaseUrl: () => string,
    cache?: CacheCapability,
    /** The model patterns a key may use (its sub-account's `allowed_models`; null: every model). */
    allowedModels: (auth: KeyHolder) => readonly string[] | null = () => null,
  ): FastifyPluginAsyncZod =>
  async (app) => {
    const availability = (model: CatalogModel) => availabilityOf(model, env, JOB_ENDPOINTS);
    // A sub-account's key sees only the models it may use: any other is unknown to it, as to the list.
    const find = (id: string, allowed: readonly string[] | null): CatalogModel => {
      const model = findNamedModel(catalog, id, {
        servable: (candidate) => availability(candidate).available && allowsModel(allowed, candidate.id),
      });
      if (!model || !allowsModel(allowed, model.id)) throw notFound(id);
      return model;
    };
    const detail = (model: CatalogModel) => ({
      ...modelRecord(model, availability(model)),
      schema: schemaBlock(model, publicBaseUrl()),
    });

    app.get(
      '/models',
      {
        schema: {
          querystring: z.object({
            modality: z.enum(MODALITIES).optional(),
            provider: z.string().optional(),
            /** `true` (the default unless `all`): only the models this gateway can serve now; `false`: only the rest. */
            available: z.enum(['true', 'false']).optional(),
            /** `true`: the whole catalog, servable or not (what `available` does not filter). */
            all: z.enum(['true', 'false']).optional(),
          }),
          response: { 200: ModelList },
        },
      },
      async (request) => {
        const { available, all, ...filter } = request.query;
        // A client's model picker shows what answers; the whole catalog is one parameter away.
        const wanted = available ?? (all === 'true' ? undefined : 'true');
        const allowed = allowedModels(request.auth);
        const records = catalog
          .list(filter)
          .filter((m) => allowsModel(allowed, m.id))
          .map((m) => modelRecord(m, availability(m)));
        return {
          object: 'list' as const,
          data:
            wanted === undefined
              ? records
              : records.filter((record) => record.available === (wanted === 'true')),
        };
      },
    );

    // A bare `gpt-4o` names no provider; an encoded `openai%2Fgpt-4o` arrives here decoded and is a whole id.
    app.get(
      '/models/:provider',
      { schema: { params: z.object({ provider: z.string() }), response: { 200: ModelDetail } } },
      async (request) => detail(find(request.params.provider, allowedModels(request.auth))),
    );

    app.get(
      '/models/:provider/*',
      {
        schema: {
          params: z.object({ provider: z.string(), '*': z.string() }),
          response: { 200: z.union([ModelDetail, SchemaBlock]) },
        },
      },
      async (request) => {
        const id = `${request.params.provider}/${request.params['*']}`;
        const allowed = allowedModels(request.auth);
        const model = catalog.get(id);
        if (model && allowsModel(allowed, model.id)) return detail(model);
        const schemaOf = /^(.+)\/schema$/.exec(id)?.[1];
        if (schemaOf) return schemaBlock(find(schemaOf, allowed), publicBaseUrl());
        throw notFound(id);
      },
    );

    app.get('/capabilities', { schema: { response: { 200: CapabilityList } } }, async (request) => ({
      object: 'list' as const,
      data: CAPABILITIES.map(({ id, description, endpoint }) => {
        const fallback = endpointDefault(endpoint.path, { catalog, env, timeoutMs: 0 });
        // A default the key may not use is none for it: a request naming no model would be refused.
        const allowed = fallback !== null && allowsModel(allowedModels(request.auth), fallback);
        return { id, description, endpoint, default_model: allowed ? fallback : null };
      }),
      mcp_url: env.GATEWAY_MCP_URL || `${publicBaseUrl()}/mcp`,
      ...(cache && { cache }),
    }));
  };
