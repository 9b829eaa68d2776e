import { permitModel } from '../../accounts/model-access.ts';
import type { Probe, ResponseCache } from '../../cache/cache.ts';
import { keyParts } from '../../cache/key.ts';
import { modeOf, policyOf } from '../../cache/mode.ts';
import type { CachedEndpoint } from '../../pipeline/cached.ts';
import type { ModalityDeps, RequestContext } from '../../pipeline/priced.ts';
import type { Outcome } from '../../pipeline/types.ts';
import { resolveModalityModel } from '../models.ts';
import { float32Base64, fromFloat32Base64 } from './base64.ts';
import { embeddingsEndpoint } from './endpoint.ts';
import type { EmbeddingsRequest, EmbeddingsResponse } from './request.ts';

/** How /v1/embeddings uses the response cache (pipeline/cached.ts): the lookup, the answer, the store. */
export function embeddingsCache(
  cache: ResponseCache | undefined,
  deps: ModalityDeps,
  context: RequestContext,
  body: EmbeddingsRequest,
): Pick<
  CachedEndpoint<Probe, EmbeddingsResponse, unknown, EmbeddingsResponse>,
  'lookup' | 'answer' | 'store'
> {
  return {
    lookup: () => lookupEmbeddings(cache, deps, context, body),
    answer: (found) => hitEmbeddings(found, body),
    store: (probe, outcome, result) => saveEmbeddings(cache, probe, context.requestId, outcome, result),
  };
}

/**
 * Embeddings are deterministic, so every mode but `skip` looks them up and stores them exactly (a semantic lookup
 * has no meaning here). The key is the model and the inputs and dimensions; the encoding is applied on the way out.
 */
async function lookupEmbeddings(
  cache: ResponseCache | undefined,
  deps: ModalityDeps,
  context: RequestContext,
  body: EmbeddingsRequest,
): Promise<Probe | undefined> {
  if (!cache) return undefined;
  const mode = cache.modeFor(context.auth, modeOf(body.cache));
  let model: string;
  try {
    model = resolveModalityModel(deps, embeddingsEndpoint, body.model).model.id;
  } catch {
    return undefined;
  }
  // A hit is served without the pipeline: a model the key may not use is refused here as the pipeline would.
  permitModel(deps.spending.allowedModels(context.auth), model, { named: body.model });
  const policy = { ...policyOf(mode === 'semantic' ? 'force' : mode, true), mode };
  const probe = await cache.lookup(
    context.auth,
    { policy, parts: keyParts('embeddings', model, body), threshold: 1 },
    context.signal,
  );
  if (
    probe.hit &&
    (probe.hit.entry.answer.kind !== 'embeddings' || !deps.catalog.get(probe.hit.entry.model))
  ) {
    delete probe.hit;
    probe.status = 'miss';
    probe.cacheStatus = 'gateway; fwd=uri-miss';
  }
  return probe;
}

/** A stored embedding answered in the encoding this request asks for. */
function hitEmbeddings(probe: Probe, body: EmbeddingsRequest): EmbeddingsResponse {
  const entry = probe.hit?.entry;
  if (entry?.answer.kind !== 'embeddings') throw new Error('an embeddings hit without its vectors');
  const { vectors, inputTokens, usageReported } = entry.answer;
  const base64 = body.encoding_format === 'base64';
  return {
    object: 'list',
    data: vectors.map((vector, index) => ({
      object: 'embedding',
      index,
      embedding: base64 ? float32Base64(vector) : vector,
    })),
    model: entry.model,
    usage: {
      prompt_tokens: inputTokens,
      total_tokens: inputTokens,
      ...(usageReported ? {} : { estimated: true as const }),
    },
  };
}

/** Keeps served vectors (as floats, whatever encoding the client asked for). */
async function saveEmbeddings(
  cache: ResponseCache | undefined,
  probe: Probe,
  requestId: string,
  served: Outcome,
  result: EmbeddingsResponse,
): Promise<void> {
  if (!cache) return;
  const vectors = result.data.map((d) =>
    typeof d.embedding === 'string' ? fromFloat32Base64(d.embedding) : d.embedding,
  );
  await cache.save(probe, {
    model: served.model.id,
    provider: served.model.provider,
    requestId,
    charge: served.charge,
    usageReported: served.usageReported,
    units: served.units,
    answer: {
      kind: 'embeddings',
      vectors,
      inputTokens: result.usage.prompt_tokens,
      usageReported: result.usage.estimated !== true,
    },
  });
}
