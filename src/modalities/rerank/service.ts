import type { Reranking } from '../../contracts/modality.ts';
import { type ModalityDeps, pricedCall, type RequestContext, type Served } from '../../pipeline/priced.ts';
import { UpstreamError } from '../../providers/errors.ts';
import { defaultModelId, resolveModalityModel } from '../models.ts';
import { PREFERRED_RERANK_MODELS, rerankEndpoint } from './endpoint.ts';
import { rerankPricing } from './pricing.ts';
import type { RerankRequest, RerankResponse } from './request.ts';

/**
 * The provider's ranking, checked against the request (before it is billed: an answer that cannot be matched to
 * the documents is the provider's failure) and ordered most relevant first.
 */
function ordered(ranking: Reranking, documents: number, topN: number): Reranking {
  const seen = new Set<number>();
  for (const { index } of ranking.ranked) {
    if (index >= documents || seen.has(index)) {
      throw new UpstreamError('server', `the provider ranked an unknown or repeated document ${index}`);
    }
    seen.add(index);
  }
  const ranked = [...ranking.ranked].sort((a, b) => b.relevanceScore - a.relevanceScore).slice(0, topN);
  return { ...ranking, ranked };
}

/** Orders the documents by relevance to the query, billed in the provider's unit (search units or tokens). */
export async function createRerank(
  deps: ModalityDeps,
  context: RequestContext,
  body: RerankRequest,
): Promise<Served<RerankResponse>> {
  const id = body.model ?? defaultModelId(deps, rerankEndpoint, PREFERRED_RERANK_MODELS);
  const target = resolveModalityModel(deps, rerankEndpoint, id);
  const { documents, query } = body;
  const topN = Math.min(body.top_n ?? documents.length, documents.length);
  const pricing = await rerankPricing(target.model, target.adapter, query, documents);
  // A provider's own figure counts only when it is in the unit the call is priced in.
  const reported = (ranking: Reranking) =>
    pricing.unit === target.adapter.unit ? ranking.billedUnits : undefined;
  const line = (quantity: number) => ({
    item: pricing.item,
    quantity,
    unitPriceNanosPerMillion: pricing.unitPriceNanosPerMillion,
  });
  const served = await pricedCall(
    deps,
    context,
    target,
    [line(pricing.worst)],
    async (upstream) =>
      ordered(
        await target.adapter.rerank({
          query,
          documents,
          topN,
          upstream,
          signal: context.signal,
        }),
        documents.length,
        topN,
      ),
    (ranking) => {
      const units = reported(ranking) ?? pricing.counted;
      return { lines: [line(units)], usageReported: reported(ranking) !== undefined, units };
    },
  );
  const units = reported(served.result) ?? pricing.counted;
  return {
    ...served,
    result: {
      object: 'list',
      model: target.model.id,
      results: served.result.ranked.map(({ index, relevanceScore }) => ({
        index,
        relevance_score: relevanceScore,
        document: { text: documents[index] ?? '' },
      })),
      usage: {
        ...(pricing.unit === 'search_units' ? { search_units: units } : { total_tokens: units }),
        ...(reported(served.result) === undefined ? { estimated: true as const } : {}),
      },
    },
  };
}
