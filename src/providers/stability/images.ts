import { FormData } from 'undici';
import { z } from 'zod';
import type {
  ImageGenerationCall,
  ImagesAdapter,
  ProducedImage,
  ProducedImages,
} from '../../contracts/images.ts';
import { postForm } from '../form-post.ts';
import type { UpstreamResponse } from '../http.ts';
import { parseReply } from '../reply.ts';

/** Stability AI's REST API; STABILITY_BASE_URL replaces it (no version path: the paths carry `/v2beta`). */
export const STABILITY_BASE_URL = 'https://api.stability.ai';

/** Stability's aspect ratios; a client's WxH is sent as the nearest. */
const ASPECT_RATIOS = ['21:9', '16:9', '3:2', '5:4', '1:1', '4:5', '2:3', '9:16', '9:21'] as const;

export function aspectRatioOf(size: string): string {
  const [w, h] = size.split('x').map(Number);
  const wanted = Math.log((w || 1) / (h || 1));
  const distance = (ratio: string) => {
    const [a, b] = ratio.split(':').map(Number);
    return Math.abs(Math.log((a ?? 1) / (b ?? 1)) - wanted);
  };
  return ASPECT_RATIOS.reduce((best, ratio) => (distance(ratio) < distance(best) ? ratio : best));
}

/** The generate endpoint of each model; the SD3.5 family shares one and is told apart by `model`. */
function generatePath(model: string): { path: string; model?: string } {
  if (model === 'stable-image-ultra') return { path: '/v2beta/stable-image/generate/ultra' };
  if (model === 'stable-image-core') return { path: '/v2beta/stable-image/generate/core' };
  return { path: '/v2beta/stable-image/generate/sd3', model };
}

/** Stability's error body: `{ id, name, errors: ["field: what is wrong", ...] }`. */
export function stabilityErrorMessage(text: string): string | undefined {
  try {
    const body = JSON.parse(text) as { name?: unknown; errors?: unknown; message?: unknown };
    if (Array.isArray(body.errors) && body.errors.length) return body.errors.map(String).join('; ');
    if (typeof body.message === 'string') return body.message;
    return typeof body.name === 'string' ? body.name : undefined;
  } catch {
    return undefined;
  }
}

const JsonImage = z.object({ image: z.string().min(1), finish_reason: z.string().optional() });

/** Asked with `accept: image/*`, Stability answers the bytes; a JSON answer (base64 `image`) is read too. */
async function oneImage(response: UpstreamResponse): Promise<ProducedImage> {
  const type = String(response.headers['content-type'] ?? '');
  if (type.startsWith('application/json')) {
    return { b64: (await parseReply(response, JsonImage, 'an image')).image };
  }
  // The bytes stay a stream: the service writes them to the blob store as they arrive.
  return { bytes: response.body, contentType: type || undefined };
}

/**
 * One image per Stability request: `n` images are `n` requests, and the images that came back are what is returned
 * (and billed: Stability charges each successful generation). Only when all fail does the call fail.
 */
async function many(n: number, once: () => Promise<ProducedImage>): Promise<ProducedImages> {
  const settled = await Promise.allSettled(Array.from({ length: n }, once));
  const images = settled.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
  const failure = settled.find((s) => s.status === 'rejected');
  if (images.length === 0 && failure) throw failure.reason;
  return { images };
}

function post(call: ImageGenerationCall, path: string, form: FormData): Promise<UpstreamResponse> {
  return postForm({
    url: `${call.upstream.baseUrl.replace(/\/+$/, '')}${path}`,
    headers: { authorization: `Bearer ${call.upstream.apiKey}`, accept: 'image/*' },
    form,
    timeoutMs: call.upstream.timeoutMs,
    signal: call.signal,
    errorMessage: stabilityErrorMessage,
  });
}

/**
 * Stability AI's v2beta Stable Image API, multipart/form-data in: `generate/{ultra,core,sd3}` (prompt, aspect_ratio,
 * style_preset, output_format, and `model` for SD3.5) and `edit/inpaint` (image, optional mask, prompt).
 */
export const stabilityImages: ImagesAdapter = {
  generate(call) {
    const target = generatePath(call.upstream.model);
    return many(call.n, async () => {
      const form = new FormData();
      form.append('prompt', call.prompt);
      form.append('output_format', 'png');
      if (target.model) form.append('model', target.model);
      if (call.size && call.size !== 'auto') form.append('aspect_ratio', aspectRatioOf(call.size));
      if (call.style) form.append('style_preset', call.style);
      return oneImage(await post(call, target.path, form));
    });
  },
  edit(call) {
    return many(call.n, async () => {
      const form = new FormData();
      form.append('image', call.image.blob, call.image.filename);
      if (call.mask) form.append('mask', call.mask.blob, call.mask.filename);
      form.append('prompt', call.prompt);
      form.append('output_format', 'png');
      return oneImage(await post(call, '/v2beta/stable-image/edit/inpaint', form));
    });
  },
};
