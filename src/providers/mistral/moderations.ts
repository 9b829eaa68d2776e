import { z } from 'zod';
import type { ModerationsAdapter, ModerationVerdict } from '../../contracts/modality.ts';
import { endpointUrl, postJson } from '../http.ts';
import { expectCount, parseReply, reportedCount } from '../reply.ts';

const Reply = z.object({
  id: z.string().optional(),
  results: z.array(
    z.object({
      categories: z.record(z.string(), z.boolean()),
      category_scores: z.record(z.string(), z.number()),
    }),
  ),
  usage: z.object({ prompt_tokens: z.unknown() }).partial().nullish(),
});

/**
 * Mistral's policy categories under the names OpenAI gives the same harm. `dangerous_and_criminal_content`
 * (mistral-moderation-2411) and `criminal` (2603) are both OpenAI's `illicit`. The rest (health, financial, law,
 * pii, dangerous, jailbreaking, ...) have no OpenAI counterpart and keep their Mistral names.
 */
const OPENAI_NAMES: Readonly<Record<string, string>> = {
  sexual: 'sexual',
  hate_and_discrimination: 'hate',
  violence_and_threats: 'violence',
  selfharm: 'self-harm',
  dangerous_and_criminal_content: 'illicit',
  criminal: 'illicit',
};

/**
 * Mistral sends no `flagged`: an input is flagged when any category is (its advice and PII categories too, which it
 * reports as policy verdicts like the rest). Two Mistral categories can land on one OpenAI name: it is flagged if
 * either is, and scores the higher score.
 */
export function toOpenAiVerdict(result: z.infer<typeof Reply>['results'][number]): ModerationVerdict {
  const categories: Record<string, boolean> = {};
  const scores: Record<string, number> = {};
  for (const [name, flagged] of Object.entries(result.categories)) {
    const key = OPENAI_NAMES[name] ?? name;
    categories[key] = (categories[key] ?? false) || flagged;
  }
  for (const [name, score] of Object.entries(result.category_scores)) {
    const key = OPENAI_NAMES[name] ?? name;
    scores[key] = Math.max(scores[key] ?? 0, score);
  }
  return {
    flagged: Object.values(categories).some(Boolean),
    categories,
    category_scores: scores,
  };
}

/** `POST {base}/moderations` of Mistral (`{model, input}`), its verdicts renamed to OpenAI's categories. */
export const mistralModerations: ModerationsAdapter = {
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
    return {
      id: reply.id,
      results: reply.results.map(toOpenAiVerdict),
      inputTokens: reportedCount(reply.usage?.prompt_tokens),
    };
  },
};
