import { z } from 'zod';
import type { ModerationVerdict } from '../../contracts/modality.ts';

export const MAX_MODERATION_INPUTS = 2048;

/** OpenAI's moderation request, for text input; `model` may be left out (the endpoint's default applies). */
export const ModerationsRequest = z
  .object({
    model: z.string().min(1).optional(),
    input: z.union([z.string(), z.array(z.string()).min(1).max(MAX_MODERATION_INPUTS)]),
  })
  .loose();
export type ModerationsRequest = z.infer<typeof ModerationsRequest>;

export interface ModerationsResponse {
  id: string;
  model: string;
  results: ModerationVerdict[];
}
