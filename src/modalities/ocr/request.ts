import { z } from 'zod';
import { exactlyOneImage, ImageFields } from '../image-input.ts';

/** Mistral's limit on a document's pages. */
export const MAX_OCR_PAGES = 1000;

export const OcrRequest = z
  .object({
    model: z.string().min(1).optional(),
    ...ImageFields,
    /** 0-based pages of a document to read (Mistral's `pages`); all when left out. */
    pages: z.array(z.number().int().min(0)).min(1).max(MAX_OCR_PAGES).optional(),
  })
  .loose()
  .superRefine(exactlyOneImage)
  .superRefine((body, ctx) => {
    if (body.pages && new Set(body.pages).size !== body.pages.length) {
      ctx.addIssue({ code: 'custom', path: ['pages'], message: 'must not repeat a page' });
    }
  });
export type OcrRequest = z.infer<typeof OcrRequest>;

/** `text` is every page's Markdown, joined by a blank line; `pages` has them apart. */
export interface OcrResponse {
  object: 'ocr';
  model: string;
  text: string;
  pages: { index: number; text: string }[];
  usage: { pages: number; estimated?: true };
}
