import { z } from 'zod';
import { expectCount, parseReply } from '../../modalities/reply.ts';
import type { EmbeddingsAdapter } from '../../modalities/types.ts';
import { postJson } from '../http.ts';
import { googleRetryDelayMs } from './retry-info.ts';

const Reply = z.object({ embeddings: z.array(z.object({ values: z.array(z.number()) })) });

/**
 * Google's `models/{model}:batchEmbedContents`: one embed request per input, answered in order. The Generative
 * Language API reports no token counts for embeddings, so the gateway always estimates them.
 */
export const geminiEmbeddings: EmbeddingsAdapter = {
  async embed({ inputs, dimensions, upstream, signal }) {
    const resource = upstream.model.includes('/') ? upstream.model : `models/${upstream.model}`;
    const response = await postJson({
      url: `${upstream.baseUrl.replace(/\/+$/, '')}/v1beta/${resource}:batchEmbedContents`,
      headers: { 'x-goog-api-key': upstream.apiKey },
      body: {
        requests: inputs.map((text) => ({
          model: resource,
          content: { parts: [{ text }] },
          ...(dimensions === undefined ? {} : { outputDimensionality: dimensions }),
        })),
      },
      timeoutMs: upstream.timeoutMs,
      signal,
      retryAfterFromBody: googleRetryDelayMs,
    });
    const reply = await parseReply(response, Reply, 'embeddings');
    expectCount(reply.embeddings.length, inputs.length, 'embeddings');
    return { vectors: reply.embeddings.map((e) => e.values), inputTokens: undefined };
  },
};
