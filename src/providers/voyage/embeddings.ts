import { z } from 'zod';
import type { EmbeddingsAdapter } from '../../contracts/modality.ts';
import { postJson } from '../http.ts';
import { inInputOrder, parseReply, reportedCount } from '../reply.ts';
import { VoyageUsage, voyageEndpoint } from './api.ts';

const Reply = z.object({
  data: z.array(z.object({ index: z.number().int().nonnegative(), embedding: z.array(z.number()) })),
  usage: VoyageUsage,
});

/**
 * Voyage's `POST /v1/embeddings`: OpenAI's shape, but `dimensions` is `output_dimension` and `input_type` is left
 * unset (Voyage's default, plain text without a query or document prompt).
 */
export const voyageEmbeddings: EmbeddingsAdapter = {
  async embed({ inputs, dimensions, upstream, signal }) {
    const { url, headers } = voyageEndpoint(upstream, '/embeddings');
    const response = await postJson({
      url,
      headers,
      body: {
        model: upstream.model,
        input: inputs,
        ...(dimensions === undefined ? {} : { output_dimension: dimensions }),
      },
      timeoutMs: upstream.timeoutMs,
      signal,
    });
    const reply = await parseReply(response, Reply, 'embeddings');
    const vectors = inInputOrder(
      reply.data.map((item) => ({ index: item.index, value: item.embedding })),
      inputs.length,
      'embeddings',
    );
    return { vectors, inputTokens: reportedCount(reply.usage?.total_tokens) };
  },
};
