import { z } from 'zod';
import { exactlyOneImage, ImageFields } from '../image-input.ts';

export const DetectionRequest = z
  .object({
    model: z.string().min(1).optional(),
    ...ImageFields,
    /** How many objects at most, most confident first (Google's `maxResults`); default 10. */
    max_results: z.number().int().min(1).max(100).optional(),
  })
  .loose()
  .superRefine(exactlyOneImage);
export type DetectionRequest = z.infer<typeof DetectionRequest>;

/**
 * Objects found, most confident first. `box` is in fractions of the image's width and height (0 to 1), origin at
 * the top left: multiply by the image's size for pixels.
 */
export interface DetectionResponse {
  object: 'list';
  model: string;
  data: {
    label: string;
    score: number;
    box: { x_min: number; y_min: number; x_max: number; y_max: number };
    label_id?: string;
  }[];
  usage: { images: number };
}
