import { z } from 'zod';
import type { ModerationsAdapter } from '../../contracts/modality.ts';
import { endpointUrl, postJson } from '../http.ts';
import { expectCount, parseReply } from '../reply.ts';

const Reply = z.object({
  id: z.string().optional(),
  results: z.array(
    z.object({
      flagged: z.boolean(),
      categories: z.record(z.string(), z.boolean()),
      category_scores: z.record(z.string(), z.number()),
      category_applied_input_types: z.record(z.string(), z.array(z.string())).optional(),
    }),
  ),
});

/** `POST {base}/moderations` of OpenAI: already the API's shape. OpenAI reports no usage (the call is free). */
export const openAiModerations: ModerationsAdapter = {
  async moderate({ inputs, upstream, signal }) {
    const response = await postJson({
      url: endpointUrl(upstream.baseUrl, '/moderations'),
      headers: { authorization: `Bearer ${upstream.apiKey}` },
      body: { model: upstream.model, input: inputs },
      timeoutMs: upstream.timeoutMs,
      signal,
    });
    const reply = await parseReply(response, Reply, 'moderation results');
    expectCount(reply.results.length, inputs.length, 'moderation results');
    return { id: reply.id, results: reply.results, inputTokens: undefined };
  },
};
