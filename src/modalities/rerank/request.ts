import { z } from 'zod';

/** Cohere's and Voyage's limit on documents per request. */
export const MAX_RERANK_DOCUMENTS = 1000;

/** `model` may be left out (the endpoint's default applies); `top_n` defaults to every document. */
export const RerankRequest = z
  .object({
    model: z.string().min(1).optional(),
    query: z.string().min(1, 'must not be empty'),
    documents: z.array(z.string()).min(1).max(MAX_RERANK_DOCUMENTS),
    top_n: z.number().int().positive().optional(),
  })
  .loose();
export type RerankRequest = z.infer<typeof RerankRequest>;

/**
 * Documents most relevant first, with their index in the request. `usage` holds the figure the call is billed in:
 * `total_tokens` (Voyage) or `search_units` (Cohere); `estimated` when the provider reported none and the figure is
 * the gateway's own count.
 */
export interface RerankResponse {
  object: 'list';
  model: string;
  results: { index: number; relevance_score: number; document: { text: string } }[];
  usage: { total_tokens?: number; search_units?: number; estimated?: true };
}
