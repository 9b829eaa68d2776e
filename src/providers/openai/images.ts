import { FormData } from 'undici';
import { z } from 'zod';
import type { ImageGenerationCall, ImagesAdapter, ProducedImages } from '../../contracts/images.ts';
import { UpstreamError } from '../errors.ts';
import { postForm } from '../form-post.ts';
import { endpointUrl, postJson, type UpstreamResponse } from '../http.ts';
import { parseReply, reportedCount } from '../reply.ts';

const Reply = z.object({
  data: z.array(
    z.object({
      b64_json: z.string().nullish(),
      url: z.string().nullish(),
      revised_prompt: z.string().nullish(),
    }),
  ),
  size: z.string().nullish(),
  quality: z.string().nullish(),
  usage: z
    .object({
      input_tokens_details: z
        .object({ text_tokens: z.unknown(), image_tokens: z.unknown() })
        .partial()
        .nullish(),
    })
    .nullish(),
});

/** DALL·E answers with URLs unless asked for base64; the GPT image models always answer base64 and refuse the field. */
const isDallE = (model: string) => model.startsWith('dall-e');

/** The optional fields of both requests, as OpenAI names them; undefined ones are left out. */
function options(call: ImageGenerationCall): Record<string, string | number> {
  const fields: Record<string, string | number | undefined> = {
    model: call.upstream.model,
    prompt: call.prompt,
    n: call.n,
    size: call.size,
    quality: call.quality,
    style: call.style,
    // The gateway stores or encodes the bytes itself, so it always takes them inline.
    response_format: isDallE(call.upstream.model) ? 'b64_json' : undefined,
  };
  return Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined)) as Record<
    string,
    string | number
  >;
}

async function produced(response: UpstreamResponse): Promise<ProducedImages> {
  const reply = await parseReply(response, Reply, 'images');
  const images = reply.data.map((item) => {
    const revised = item.revised_prompt ? { revisedPrompt: item.revised_prompt } : {};
    if (item.b64_json) return { b64: item.b64_json, ...revised };
    if (item.url) return { url: item.url, ...revised };
    throw new UpstreamError('server', 'the provider answered an image with neither b64_json nor url');
  });
  const details = reply.usage?.input_tokens_details;
  return {
    images,
    size: reply.size ?? undefined,
    quality: reply.quality ?? undefined,
    textTokens: reportedCount(details?.text_tokens),
    imageTokens: reportedCount(details?.image_tokens),
  };
}

/** OpenAI's `{ error: { message } }`. */
export function openAiErrorMessage(text: string): string | undefined {
  try {
    const message = (JSON.parse(text) as { error?: { message?: unknown } }).error?.message;
    return typeof message === 'string' ? message : undefined;
  } catch {
    return undefined;
  }
}

/**
 * OpenAI's Images API: `POST /images/generations` (JSON) and `POST /images/edits` (multipart/form-data: `image`,
 * optional `mask`, and the other fields as text), for dall-e-2, dall-e-3 and gpt-image-1.
 */
export const openAiImages: ImagesAdapter = {
  async generate(call) {
    const response = await postJson({
      url: endpointUrl(call.upstream.baseUrl, '/images/generations'),
      headers: { authorization: `Bearer ${call.upstream.apiKey}` },
      body: options(call),
      timeoutMs: call.upstream.timeoutMs,
      signal: call.signal,
    });
    return produced(response);
  },
  async edit(call) {
    const form = new FormData();
    form.append('image', call.image.blob, call.image.filename);
    if (call.mask) form.append('mask', call.mask.blob, call.mask.filename);
    for (const [name, value] of Object.entries(options(call))) form.append(name, String(value));
    const response = await postForm({
      url: endpointUrl(call.upstream.baseUrl, '/images/edits'),
      headers: { authorization: `Bearer ${call.upstream.apiKey}` },
      form,
      timeoutMs: call.upstream.timeoutMs,
      signal: call.signal,
      errorMessage: openAiErrorMessage,
    });
    return produced(response);
  },
};
