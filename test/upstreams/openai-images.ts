import { createHash } from 'node:crypto';
import { type BinaryIncoming, type BinaryReply, isPng, png, startBinaryUpstream } from './binary-harness.ts';
import { tokens } from './modality-model.ts';
import { isObj } from './model.ts';
import type { Upstream } from './types.ts';

/**
 * OpenAI's Images API: `POST /v1/images/generations` (JSON) and `POST /v1/images/edits` (multipart/form-data), for
 * dall-e-2, dall-e-3 and gpt-image-1, with OpenAI's checks and error bodies. Images are 1×1 PNGs whose text says
 * what was asked (imageText below). URL answers point at `GET /files/<name>` on the simulator itself.
 *
 * gpt-image-1 answers `size`, `quality` and `usage` as OpenAI does: `auto` becomes 1024x1024 and medium; input text
 * tokens are the prompt's words; an input image costs IMAGE_TOKENS_PER_INPUT tokens.
 */
export interface OpenAiImagesUpstream extends Upstream {
  /** Answer DALL·E requests with URLs even when asked for b64_json (as OpenAI-compatible providers may). */
  answerWithUrls(on: boolean): void;
}

export const IMAGE_TOKENS_PER_INPUT = 323;

const SIZES: Record<string, string[]> = {
  'dall-e-2': ['256x256', '512x512', '1024x1024'],
  'dall-e-3': ['1024x1024', '1792x1024', '1024x1792'],
  'gpt-image-1': ['1024x1024', '1536x1024', '1024x1536', 'auto'],
};
const QUALITIES: Record<string, string[]> = {
  'dall-e-2': ['standard', 'auto'],
  'dall-e-3': ['standard', 'hd', 'auto'],
  'gpt-image-1': ['low', 'medium', 'high', 'auto'],
};
const OUTPUT_TOKENS: Record<string, [number, number]> = {
  low: [272, 408],
  medium: [1056, 1584],
  high: [4160, 6240],
};

export const imageText = (
  kind: 'generate' | 'edit',
  model: string,
  prompt: string,
  index: number,
  extra = '',
) => `${kind}|${model}|${prompt}|${index}${extra ? `|${extra}` : ''}`;

export async function startOpenAiImagesUpstream(): Promise<OpenAiImagesUpstream> {
  const files = new Map<string, Buffer>();
  let base = '';
  let urls = false;

  function handle(request: BinaryIncoming): BinaryReply {
    const route = `${request.method} ${request.path}`;
    const served = /^GET \/files\/([\w.-]+)$/.exec(route);
    if (served?.[1]) {
      const bytes = files.get(served[1]);
      return bytes ? { status: 200, bytes } : error(404, { message: 'File not found' });
    }
    if (route !== 'POST /v1/images/generations' && route !== 'POST /v1/images/edits') {
      return error(404, { message: `Invalid URL (${route})` });
    }
    if (!/^Bearer\s+\S+/i.test(request.headers.authorization ?? '')) return errorReply(401);
    if (route === 'POST /v1/images/generations') {
      if (request.invalidJson || !isObj(request.json))
        return error(400, { message: 'We could not parse the JSON body.' });
      return answer('generate', request.json, undefined);
    }
    if (!request.multipart) {
      return error(400, {
        message: 'Invalid Content-Type header (application/json), expected multipart/form-data.',
      });
    }
    const fields: Record<string, unknown> = { ...request.fields };
    if (fields.n !== undefined) fields.n = Number(fields.n);
    return answer('edit', fields, request);
  }

  function answer(
    kind: 'generate' | 'edit',
    body: Record<string, unknown>,
    form: BinaryIncoming | undefined,
  ): BinaryReply {
    const model = body.model ?? (kind === 'edit' ? 'dall-e-2' : 'dall-e-2');
    if (typeof model !== 'string' || !SIZES[model] || (kind === 'edit' && model === 'dall-e-3')) {
      return error(400, {
        message: `Invalid value for 'model' = ${String(model)}.`,
        param: 'model',
        code: 'invalid_value',
      });
    }
    if (typeof body.prompt !== 'string' || body.prompt === '') {
      return error(400, {
        message: "Missing required parameter: 'prompt'.",
        param: 'prompt',
        code: 'missing_required_parameter',
      });
    }
    const n = body.n ?? 1;
    if (
      typeof n !== 'number' ||
      !Number.isInteger(n) ||
      n < 1 ||
      n > 10 ||
      (model === 'dall-e-3' && n !== 1)
    ) {
      return error(400, { message: `Invalid 'n': ${String(n)}.`, param: 'n', code: 'invalid_value' });
    }
    const gpt = model === 'gpt-image-1';
    const size = (body.size as string | undefined) ?? (gpt ? 'auto' : '1024x1024');
    if (!SIZES[model]?.includes(size)) {
      return error(400, {
        message: `Invalid value: '${size}'. Supported values are: ${SIZES[model]?.join(', ')}.`,
        param: 'size',
        code: 'invalid_value',
      });
    }
    const quality = (body.quality as string | undefined) ?? 'auto';
    if (!QUALITIES[model]?.includes(quality)) {
      return error(400, { message: `Invalid value: '${quality}'.`, param: 'quality', code: 'invalid_value' });
    }
    if (body.style !== undefined && model !== 'dall-e-3') {
      return error(400, {
        message: "Unknown parameter: 'style'.",
        param: 'style',
        code: 'unknown_parameter',
      });
    }
    if (gpt && body.response_format !== undefined) {
      return error(400, {
        message: "Unknown parameter: 'response_format'.",
        param: 'response_format',
        code: 'unknown_parameter',
      });
    }
    let source = '';
    if (form) {
      const image = form.files.image ?? form.files['image[]'];
      if (!image) return error(400, { message: "Missing required parameter: 'image'.", param: 'image' });
      if (model === 'dall-e-2' && (!isPng(image.bytes) || image.bytes.length > 4 * 1024 * 1024)) {
        return error(400, {
          message: "Invalid input image - format must be in ['RGBA', 'LA', 'L'], got RGB.",
          param: 'image',
        });
      }
      source = createHash('sha256').update(image.bytes).digest('hex').slice(0, 12);
      if (form.files.mask) source += `+mask:${form.files.mask.bytes.length}`;
    }
    const prompt = body.prompt;
    const data = Array.from({ length: n }, (_, index) => {
      const bytes = png(imageText(kind, model, prompt, index, source));
      const revised = model === 'dall-e-3' ? { revised_prompt: `A vivid rendering of ${prompt}` } : {};
      if (!gpt && (urls || body.response_format !== 'b64_json')) {
        const name = `img-${createHash('sha256').update(bytes).digest('hex').slice(0, 16)}.png`;
        files.set(name, bytes);
        return { url: `${base}/files/${name}`, ...revised };
      }
      return { b64_json: bytes.toString('base64'), ...revised };
    });
    const created = Math.floor(Date.now() / 1000);
    if (!gpt) return { status: 200, body: { created, data } };
    const producedSize = size === 'auto' ? '1024x1024' : size;
    const producedQuality = quality === 'auto' ? 'medium' : quality;
    const [sq, other] = OUTPUT_TOKENS[producedQuality] as [number, number];
    const outputTokens = n * (producedSize === '1024x1024' ? sq : other);
    const textTokens = tokens(prompt);
    const imageTokens = form ? IMAGE_TOKENS_PER_INPUT * (form.files.mask ? 2 : 1) : 0;
    return {
      status: 200,
      body: {
        created,
        data,
        background: 'opaque',
        output_format: 'png',
        size: producedSize,
        quality: producedQuality,
        usage: {
          input_tokens: textTokens + imageTokens,
          input_tokens_details: { text_tokens: textTokens, image_tokens: imageTokens },
          output_tokens: outputTokens,
          total_tokens: textTokens + imageTokens + outputTokens,
        },
      },
    };
  }

  const upstream = await startBinaryUpstream({ handle, errorReply, rateLimited });
  base = upstream.url;
  return {
    ...upstream,
    answerWithUrls(on) {
      urls = on;
    },
  };
}

interface ErrorFields {
  message: string;
  type?: string;
  param?: string;
  code?: string;
}

function error(status: number, fields: ErrorFields, headers: Record<string, string> = {}): BinaryReply {
  const { message, type = 'invalid_request_error', param = null, code = null } = fields;
  return { status, headers, body: { error: { message, type, param, code } } };
}

function errorReply(status: number): BinaryReply {
  if (status === 401) return error(401, { message: 'Incorrect API key provided.', code: 'invalid_api_key' });
  return status >= 500
    ? error(status, {
        message: 'The server had an error while processing your request.',
        type: 'server_error',
      })
    : error(status, { message: 'Request failed.' });
}

function rateLimited(retryAfterSeconds: number): BinaryReply {
  return error(
    429,
    { message: 'Rate limit reached for images per minute.', type: 'requests', code: 'rate_limit_exceeded' },
    { 'retry-after': String(retryAfterSeconds) },
  );
}
