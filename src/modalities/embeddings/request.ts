import { z } from 'zod';

/** OpenAI's limit on texts per request; providers with a lower one refuse with their own message. */
export const MAX_EMBEDDING_INPUTS = 2048;

const Text = z.string().min(1, 'must not be empty');

/** OpenAI's embeddings request, for text input (token-id arrays are not accepted). */
export const EmbeddingsRequest = z
  .object({
    model: z.string().min(1),
    input: z.union([Text, z.array(Text).min(1).max(MAX_EMBEDDING_INPUTS)]),
    encoding_format: z.enum(['float', 'base64']).optional(),
    dimensions: z.number().int().positive().optional(),
    user: z.string().optional(),
  })
  .loose();
export type EmbeddingsRequest = z.infer<typeof EmbeddingsRequest>;

/**
 * OpenAI's response shape. `usage.estimated` is added when the provider reported no token count and the figures
 * (and the charge) are the gateway's own count.
 */
export interface EmbeddingsResponse {
  object: 'list';
  data: { object: 'embedding'; index: number; embedding: number[] | string }[];
  model: string;
  usage: { prompt_tokens: number; total_tokens: number; estimated?: true };
}
