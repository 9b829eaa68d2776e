import { z } from 'zod';

const text = (field: string, max: number) =>
  z
    .string({ error: `'${field}' must be a string` })
    .min(1, `'${field}' must not be empty`)
    .max(max, `'${field}' is longer than ${max} characters`);

/** The API's AsyncJobRequest (music, video, 3D). Unknown fields are ignored, as OpenAI's API does. */
export const AsyncJobRequest = z.object({
  prompt: text('prompt', 10_000),
  model: text('model', 200).optional(),
  duration: z.number().positive().max(600).optional(),
  aspect_ratio: z
    .string()
    .regex(/^\d{1,2}:\d{1,2}$/, "'aspect_ratio' looks like 16:9")
    .optional(),
  resolution: z
    .string()
    .regex(/^\d{3,4}p$|^\d{2,5}x\d{2,5}$/, "'resolution' looks like 720p or 1280x720")
    .optional(),
  image_url: text('image_url', 8_192).optional(),
  lyrics: text('lyrics', 20_000).optional(),
  is_instrumental: z.boolean().optional(),
  webhook_url: text('webhook_url', 2_048).optional(),
});
export type AsyncJobRequest = z.infer<typeof AsyncJobRequest>;

export const JobParams = z.object({ id: z.string().min(1).max(200) });
