import { z } from 'zod';
import type { DetectionAdapter } from '../../contracts/detections.ts';
import { UpstreamError } from '../errors.ts';
import { postJson } from '../http.ts';
import { parseReply } from '../reply.ts';
import { visionEndpoint } from './api.ts';

// proto3 JSON leaves out fields at their default: a vertex on the left or top edge comes without `x` or `y`.
const Vertex = z.object({ x: z.number().optional(), y: z.number().optional() });

const Reply = z.object({
  responses: z
    .array(
      z.object({
        localizedObjectAnnotations: z
          .array(
            z.object({
              mid: z.string().optional(),
              name: z.string(),
              score: z.number().optional(),
              boundingPoly: z.object({ normalizedVertices: z.array(Vertex).optional() }).optional(),
            }),
          )
          .optional(),
        error: z.object({ code: z.number().optional(), message: z.string().optional() }).optional(),
      }),
    )
    .length(1),
});

/** google.rpc.Code INVALID_ARGUMENT: the image itself was refused (not an image, too large, corrupt). */
const INVALID_ARGUMENT = 3;

/**
 * `POST /v1/images:annotate` with one request: the image as base64 `content` and the OBJECT_LOCALIZATION feature
 * (https://cloud.google.com/vision/docs/object-localizer). A failure of the one image comes inside a 200, as the
 * response's `error` (a google.rpc.Status). Boxes are normalized vertices (0 to 1); the gateway gives their extent.
 */
export const visionObjects: DetectionAdapter = {
  async detect({ image, maxResults, upstream, signal }) {
    const { url, headers } = visionEndpoint(upstream, '/v1/images:annotate');
    const response = await postJson({
      url,
      headers,
      body: {
        requests: [
          {
            image: { content: image.toString('base64') },
            features: [{ type: 'OBJECT_LOCALIZATION', maxResults }],
          },
        ],
      },
      timeoutMs: upstream.timeoutMs,
      signal,
    });
    const reply = await parseReply(response, Reply, 'object annotations');
    const [result] = reply.responses;
    if (result?.error) {
      const message = result.error.message ?? `error ${result.error.code}`;
      throw new UpstreamError(result.error.code === INVALID_ARGUMENT ? 'client' : 'server', message);
    }
    return (result?.localizedObjectAnnotations ?? []).map((annotation) => {
      const vertices = (annotation.boundingPoly?.normalizedVertices ?? []).map((v) => ({
        x: v.x ?? 0,
        y: v.y ?? 0,
      }));
      const xs = vertices.map((v) => v.x);
      const ys = vertices.map((v) => v.y);
      const clamp = (n: number) => Math.min(1, Math.max(0, n));
      return {
        label: annotation.name,
        score: annotation.score ?? 0,
        labelId: annotation.mid,
        box: {
          x_min: clamp(xs.length ? Math.min(...xs) : 0),
          y_min: clamp(ys.length ? Math.min(...ys) : 0),
          x_max: clamp(xs.length ? Math.max(...xs) : 0),
          y_max: clamp(ys.length ? Math.max(...ys) : 0),
        },
      };
    });
  },
};
