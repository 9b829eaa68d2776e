import { unitLine } from '../../catalog/unit-models.ts';
import type { ChatDeps } from '../../chat/complete.ts';
import { pricedCall, type RequestContext, type Served } from '../../pipeline/priced.ts';
import { decodeImageB64, fetchImage } from '../image-input.ts';
import { defaultModelId, resolveModalityModel } from '../models.ts';
import { detectionEndpoint, PREFERRED_DETECTION_MODELS } from './endpoint.ts';
import type { DetectionRequest, DetectionResponse } from './request.ts';

/**
 * Google Vision takes the image inline as base64 in a JSON request of at most 10 MB
 * (https://cloud.google.com/vision/quotas): 7 MiB of image is 9.8 MB of base64.
 */
export const MAX_DETECTION_IMAGE_BYTES = 7 * 1024 * 1024;

/**
 * Finds objects in one image, billed per image. A URL is fetched by the gateway (through the URL guard), not handed
 * to Google: Google's own fetching of image URLs is documented as unreliable, and one path keeps one size limit.
 */
export async function createDetection(
  deps: ChatDeps,
  context: RequestContext,
  body: DetectionRequest,
): Promise<Served<DetectionResponse>> {
  const id = body.model ?? defaultModelId(deps, detectionEndpoint, PREFERRED_DETECTION_MODELS);
  const target = resolveModalityModel(deps, detectionEndpoint, id);
  const image =
    body.image_url !== undefined
      ? await fetchImage(body.image_url, deps.env, MAX_DETECTION_IMAGE_BYTES, context.signal)
      : decodeImageB64(body.image_b64 ?? '', MAX_DETECTION_IMAGE_BYTES);
  const line = unitLine('images', 1, target.model.prices.perUnitNanos?.image ?? 0n);
  const served = await pricedCall(
    deps,
    context,
    target,
    [line],
    (upstream) =>
      target.adapter.detect({
        image: image.data,
        maxResults: body.max_results ?? 10,
        upstream,
        signal: context.signal,
      }),
    // Google bills an image it annotated whether or not it found anything, and reports no usage: one image.
    () => ({ lines: [line], usageReported: false, units: 1 }),
  );
  return {
    ...served,
    result: {
      object: 'list',
      model: target.model.id,
      data: [...served.result]
        .sort((a, b) => b.score - a.score)
        .map((found) => ({
          label: found.label,
          score: found.score,
          box: found.box,
          ...(found.labelId !== undefined && { label_id: found.labelId }),
        })),
      usage: { images: 1 },
    },
  };
}
