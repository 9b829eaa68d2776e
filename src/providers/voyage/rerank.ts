import { z } from 'zod';
import type { RerankAdapter } from '../../contracts/modality.ts';
import { postJson } from '../http.ts';
import { parseReply, reportedCount } from '../reply.ts';
import { VoyageUsage, voyageEndpoint } from './api.ts';

const Reply = z.object({
  data: z.array(z.object({ index: z.number().int().nonnegative(), relevance_score: z.number() })),
  usage: VoyageUsage,
});

/** Voyage's `POST /v1/rerank` (`top_k` for top_n), billed in tokens. */
export const voyageRerank: RerankAdapter = {
  unit: 'tokens',
  async rerank({ query, documents, topN, upstream, signal }) {
    const { url, headers } = voyageEndpoint(upstream, '/rerank');
    const response = await postJson({
      url,
      headers,
      body: { model: upstream.model, query, documents, top_k: topN },
      timeoutMs: upstream.timeoutMs,
      signal,
    });
    const reply = await parseReply(response, Reply, 'rerank results');
    return {
      ranked: reply.data.map((r) => ({ index: r.index, relevanceScore: r.relevance_score })),
      billedUnits: reportedCount(reply.usage?.total_tokens),
    };
  },
};
