import { z } from 'zod';
import type { EmbeddingsAdapter, EmbeddingsCall } from '../../contracts/modality.ts';
import { endpointUrl, postJson } from '../http.ts';
import { inBatches } from '../in-batches.ts';
import { expectCount, parseReply } from '../reply.ts';
import { googleRetryDelayMs } from './retry-info.ts';

const Reply = z.object({ embeddings: z.array(z.object({ values: z.array(z.number()) })) });

/** Google refuses a batch of more than 100 embed requests. */
const MAX_BATCH = 100;

async function embedBatch({ inputs, dimensions, upstream, signal }: EmbeddingsCall) {
  const resource = upstream.model.includes('/') ? upstream.model : `models/${upstream.model}`;
  const response = await postJson({
    url: endpointUrl(upstream.baseUrl, `/v1beta/${resource}:batchEmbedContents`),
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
}

/**
 * Google's `models/{model}:batchEmbedContents`: one embed request per input, answered in order. The Generative
 * Language API reports no token counts for embeddings, so the gateway always estimates them.
 */
export const geminiEmbeddings: EmbeddingsAdapter = {
  embed: (call) => inBatches(call.inputs, MAX_BATCH, (inputs) => embedBatch({ ...call, inputs })),
};
