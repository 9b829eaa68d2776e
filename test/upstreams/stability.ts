import { createHash, randomUUID } from 'node:crypto';
import { type BinaryIncoming, type BinaryReply, png, startBinaryUpstream } from './binary-harness.ts';
import type { Upstream } from './types.ts';

/**
 * Stability AI's v2beta Stable Image API: `POST /v2beta/stable-image/generate/{ultra,core,sd3}` and
 * `POST /v2beta/stable-image/edit/inpaint`, multipart/form-data in; with `accept: image/*` the image bytes out
 * (`finish-reason` and `seed` headers), with `accept: application/json` `{ image, finish_reason, seed }`. Errors are
 * `{ id, name, errors: [...] }`. The image's text is stabilityText(...).
 */
export function startStabilityUpstream(): Promise<Upstream> {
  return startBinaryUpstream({ handle, errorReply, rateLimited });
}

const ASPECT_RATIOS = ['21:9', '16:9', '3:2', '5:4', '1:1', '4:5', '2:3', '9:16', '9:21'];
const SD3_MODELS = ['sd3.5-large', 'sd3.5-large-turbo', 'sd3.5-medium', 'sd3.5-flash'];
const STYLE_PRESETS = ['anime', 'cinematic', 'digital-art', 'photographic', 'pixel-art'];

export const stabilityText = (service: string, prompt: string, detail: string) =>
  `${service}|${prompt}|${detail}`;

function handle(request: BinaryIncoming): BinaryReply {
  const route = `${request.method} ${request.path}`;
  const service = /^POST \/v2beta\/stable-image\/(generate\/(?:ultra|core|sd3)|edit\/inpaint)$/.exec(
    route,
  )?.[1];
  if (!service) return error(404, 'not_found', [`${request.path} is not a valid route`]);
  if (!/^Bearer\s+sk-\S+/.test(request.headers.authorization ?? '')) return errorReply(401);
  if (!request.multipart) return error(400, 'bad_request', ['content-type: must be multipart/form-data']);
  const accept = request.headers.accept ?? 'image/*';
  if (accept !== 'image/*' && accept !== 'application/json') {
    return error(400, 'bad_request', ['accept: must be image/* or application/json']);
  }
  const { fields, files } = request;
  const prompt = fields.prompt;
  if (!prompt) return error(400, 'bad_request', ['prompt: is required']);
  const aspect = fields.aspect_ratio ?? '1:1';
  if (!ASPECT_RATIOS.includes(aspect))
    return error(400, 'bad_request', [`aspect_ratio: must be one of ${ASPECT_RATIOS.join(', ')}`]);
  if (fields.output_format && !['png', 'jpeg', 'webp'].includes(fields.output_format)) {
    return error(400, 'bad_request', ['output_format: must be one of png, jpeg, webp']);
  }
  let detail = `aspect:${aspect}`;
  if (service === 'generate/sd3') {
    const model = fields.model ?? 'sd3.5-large';
    if (!SD3_MODELS.includes(model))
      return error(400, 'bad_request', [`model: must be one of ${SD3_MODELS.join(', ')}`]);
    detail += `|model:${model}`;
  }
  if (fields.style_preset !== undefined) {
    if (service !== 'generate/core' || !STYLE_PRESETS.includes(fields.style_preset)) {
      return error(400, 'bad_request', ['style_preset: invalid value']);
    }
    detail += `|style:${fields.style_preset}`;
  }
  if (service === 'edit/inpaint') {
    const image = files.image;
    if (!image) return error(400, 'bad_request', ['image: is required']);
    detail = `source:${createHash('sha256').update(image.bytes).digest('hex').slice(0, 12)}`;
    if (files.mask) detail += `|mask:${files.mask.bytes.length}`;
  }
  const content = /\b(forbidden)\b/i.test(prompt);
  if (content)
    return error(403, 'content_moderation', ['Your request was flagged by our content moderation system.']);
  const bytes = png(stabilityText(service, prompt, detail));
  const seed = String(request.seq + 1);
  if (accept === 'application/json') {
    return {
      status: 200,
      body: { image: bytes.toString('base64'), finish_reason: 'SUCCESS', seed: Number(seed) },
    };
  }
  return { status: 200, headers: { 'finish-reason': 'SUCCESS', seed }, bytes };
}

function error(
  status: number,
  name: string,
  errors: string[],
  headers: Record<string, string> = {},
): BinaryReply {
  return { status, headers, body: { id: randomUUID().replaceAll('-', ''), name, errors } };
}

function errorReply(status: number): BinaryReply {
  if (status === 401) return error(401, 'unauthorized', ['authorization: missing or invalid API key']);
  if (status >= 500) {
    return error(status, 'internal_error', [
      'An unexpected server error has occurred, please try again later.',
    ]);
  }
  return error(status, 'bad_request', ['the request was refused']);
}

function rateLimited(retryAfterSeconds: number): BinaryReply {
  return error(
    429,
    'rate_limit_exceeded',
    ['You have exceeded the rate limit of 150 requests within a 10 second period.'],
    { 'retry-after': String(retryAfterSeconds) },
  );
}
