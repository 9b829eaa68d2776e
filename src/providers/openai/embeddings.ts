import { z } from 'zod';
import type { EmbeddingsAdapter } from '../../contracts/modality.ts';
import { endpointUrl, postJson } from '../http.ts';
import { inInputOrder, parseReply, reportedCount } from '../reply.ts';

const Reply = z.object({
  data: z.array(z.object({ index: z.number().int().nonnegative(), embedding: z.array(z.number()) })),
  usage: z.object({ prompt_tokens: z.unknown(), total_tokens: z.unknown() }).partial().nullish(),
});

/**
 * `POST {base}/embeddings` of OpenAI and the providers that copy it (Mistral, Together, Fireworks, ...). Floats are
 * always asked for: base64 is produced by the gateway, so every provider's answer goes through one path.
 */
export const openAiEmbeddings: EmbeddingsAdapter = {
  async embed({ inputs, dimensions, upstream, signal }) {
    const response = await postJson({
      url: endpointUrl(upstream.baseUrl, '/embeddings'),
      headers: { authorization: `Bearer ${upstream.apiKey}` },
      body: {
        model: upstream.model,
        input: inputs,
        encoding_format: 'float',
        ...(dimensions === undefined ? {} : { dimensions }),
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
    // Embedding calls have no output: prompt and total are the same count, and some copies send only one.
    const inputTokens = reportedCount(reply.usage?.prompt_tokens) ?? reportedCount(reply.usage?.total_tokens);
    return { vectors, inputTokens };
  },
};
