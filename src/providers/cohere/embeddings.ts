import { z } from 'zod';
import type { EmbeddingsAdapter, EmbeddingsCall } from '../../contracts/modality.ts';
import { postJson } from '../http.ts';
import { inBatches } from '../in-batches.ts';
import { expectCount, parseReply, reportedCount } from '../reply.ts';
import { CohereMeta, cohereEndpoint } from './api.ts';

const Reply = z.object({
  embeddings: z.object({ float: z.array(z.array(z.number())) }),
  meta: CohereMeta,
});

/** Cohere takes at most 96 texts per call. */
const MAX_BATCH = 96;

async function embedBatch({ inputs, dimensions, upstream, signal }: EmbeddingsCall) {
  const { url, headers } = cohereEndpoint(upstream, '/v2/embed');
  const response = await postJson({
    url,
    headers,
    body: {
      model: upstream.model,
      texts: inputs,
      input_type: 'search_document',
      embedding_types: ['float'],
      ...(dimensions === undefined ? {} : { output_dimension: dimensions }),
    },
    timeoutMs: upstream.timeoutMs,
    signal,
  });
  const reply = await parseReply(response, Reply, 'float embeddings');
  expectCount(reply.embeddings.float.length, inputs.length, 'embeddings');
  return {
    vectors: reply.embeddings.float,
    inputTokens: reportedCount(reply.meta?.billed_units?.input_tokens),
  };
}

/**
 * Cohere's `POST /v2/embed`. Its v3+ models require an `input_type`; the OpenAI request has none, and
 * `search_document` (text to be stored and searched) is what an embeddings endpoint is mostly used for.
 */
export const cohereEmbeddings: EmbeddingsAdapter = {
  embed: (call) => inBatches(call.inputs, MAX_BATCH, (inputs) => embedBatch({ ...call, inputs })),
};
