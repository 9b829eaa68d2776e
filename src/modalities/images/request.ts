import { z } from 'zod';
import { RequestRefused } from '../../contracts/errors.ts';
import type { ImageDatum } from './output.ts';
import { QUALITIES, type Quality, type ResponseFormat } from './rules.ts';

/** OpenAI's limit on images per request; a model's own lower limit is checked with its rules. */
export const MAX_IMAGES = 10;

const Size = z.string().regex(/^(\d{1,5}x\d{1,5}|auto)$/, 'must be WxH, e.g. 1024x1024');
const Count = z.number().int().min(1).max(MAX_IMAGES);
/** Fields OpenAI's API takes as null too; null means left out. */
const optional = <T extends z.ZodType>(schema: T) => schema.nullish().transform((v) => v ?? undefined);

const common = {
  model: optional(z.string().min(1)),
  prompt: z.string().min(1, 'must not be empty'),
  size: optional(Size),
  quality: optional(z.enum(QUALITIES)),
  response_format: optional(z.enum(['url', 'b64_json'])),
  user: optional(z.string()),
  stream: optional(z.literal(false, 'streamed image generation is not supported; leave stream out')),
};

/** `POST /v1/images/generations`: OpenAI's request; `model` may be left out (see endpoint.ts). */
export const ImageGenerationRequest = z
  .object({ ...common, n: optional(Count), style: optional(z.string().min(1)) })
  .loose();
export type ImageGenerationRequest = z.infer<typeof ImageGenerationRequest>;

/** `POST /v1/images/edits` as JSON: the source (and optional mask) as an http(s) URL or base64. */
export const ImageEditJsonRequest = z
  .object({
    ...common,
    n: optional(Count),
    image: z.string().min(1, 'must not be empty'),
    mask: optional(z.string().min(1)),
  })
  .loose();
export type ImageEditJsonRequest = z.infer<typeof ImageEditJsonRequest>;

/** The text fields of a multipart edit: every value arrives as a string. */
export const ImageEditFormFields = z
  .object({
    ...common,
    n: optional(z.string().regex(/^\d+$/, 'must be an integer').transform(Number).pipe(Count)),
  })
  .loose();

/** The fields both endpoints share, whatever the body's form. */
export interface ImageRequestFields {
  model?: string;
  prompt: string;
  n?: number;
  size?: string;
  quality?: Quality;
  style?: string;
  response_format?: ResponseFormat;
}

/** A body checked outside the route schema (the edits route takes JSON or multipart), refused as the API's 400. */
export function parseBody<T extends z.ZodType>(schema: T, body: unknown): z.infer<T> {
  const parsed = schema.safeParse(body ?? {});
  if (parsed.success) return parsed.data;
  const issues = parsed.error.issues.map((issue) => {
    const path = issue.path.join('.');
    return `${path ? `'${path}'` : 'body'}: ${issue.message}`;
  });
  throw new RequestRefused('invalid', `Invalid body: ${issues.join('; ')}`);
}

/** OpenAI's images response. */
export interface ImagesResponse {
  created: number;
  data: ImageDatum[];
}
