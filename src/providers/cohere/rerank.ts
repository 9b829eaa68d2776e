import { z } from 'zod';
import type { RerankAdapter } from '../../contracts/modality.ts';
import { postJson } from '../http.ts';
import { parseReply, reportedCount } from '../reply.ts';
import { CohereMeta, cohereEndpoint } from './api.ts';

const Reply = z.object({
  results: z.array(z.object({ index: z.number().int().nonnegative(), relevance_score: z.number() })),
  meta: CohereMeta,
});

/**
 * Cohere's `POST /v2/rerank`, billed in search units: one query over up to 100 documents, long documents split
 * into chunks that each count as a document (https://docs.cohere.com/docs/rerank-overview#pricing).
 */
export const cohereRerank: RerankAdapter = {
  unit: 'search_units',
  async rerank({ query, documents, topN, upstream, signal }) {
    const { url, headers } = cohereEndpoint(upstream, '/v2/rerank');
    const response = await postJson({
      url,
      headers,
      body: { model: upstream.model, query, documents, top_n: topN },
      timeoutMs: upstream.timeoutMs,
      signal,
    });
    const reply = await parseReply(response, Reply, 'rerank results');
    return {
      ranked: reply.results.map((r) => ({ index: r.index, relevanceScore: r.relevance_score })),
      billedUnits: reportedCount(reply.meta?.billed_units?.search_units),
    };
  },
};
