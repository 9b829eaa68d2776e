import { type Incoming, type Reply, startUpstream } from './harness.ts';
import { isObj, list } from './model.ts';
import type { Upstream } from './types.ts';

/**
 * Google Cloud Vision's `POST /v1/images:annotate` with the OBJECT_LOCALIZATION feature
 * (https://cloud.google.com/vision/docs/object-localizer): the key in `x-goog-api-key` (or `?key=`), one response
 * per request, boxes as normalized vertices in proto3 JSON (a coordinate of 0 is left out), and a bad image as a
 * per-image `error` inside a 200. Errors of the whole call are google.rpc.Status bodies.
 *
 * Any PNG or JPEG shows the same two objects, most confident first: a Person and a Car (OBJECTS below).
 */
export function startGoogleVisionUpstream(): Promise<Upstream> {
  return startUpstream({ handle, errorReply, rateLimited });
}

export const OBJECTS = [
  {
    mid: '/m/01g317',
    name: 'Person',
    score: 0.92,
    // The top edge is at y = 0, which proto3 JSON leaves out.
    boundingPoly: { normalizedVertices: [{ x: 0.1 }, { x: 0.5 }, { x: 0.5, y: 0.9 }, { x: 0.1, y: 0.9 }] },
  },
  {
    mid: '/m/0k4j',
    name: 'Car',
    score: 0.81,
    boundingPoly: {
      normalizedVertices: [
        { x: 0.55, y: 0.4 },
        { x: 0.95, y: 0.4 },
        { x: 0.95, y: 0.8 },
        { x: 0.55, y: 0.8 },
      ],
    },
  },
];

function handle(request: Incoming): Reply {
  if (`${request.method} ${request.path}` !== 'POST /v1/images:annotate')
    return status(404, 'NOT_FOUND', 'Not Found');
  if (!request.headers['x-goog-api-key'] && !request.query.key) return errorReply(403);
  const body = request.body;
  if (request.invalidJson || !isObj(body) || !Array.isArray(body.requests)) {
    return status(400, 'INVALID_ARGUMENT', 'Invalid JSON payload received.');
  }
  const responses = body.requests.map((one: unknown) => {
    const image = isObj(one) && isObj(one.image) ? one.image : {};
    const bytes = Buffer.from(typeof image.content === 'string' ? image.content : '', 'base64');
    const png = bytes.subarray(0, 4).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47]));
    const jpeg = bytes[0] === 0xff && bytes[1] === 0xd8;
    if (!png && !jpeg) return { error: { code: 3, message: 'Bad image data.' } };
    const feature = list(isObj(one) ? one.features : undefined).find(
      (f) => isObj(f) && f.type === 'OBJECT_LOCALIZATION',
    );
    if (!isObj(feature)) return {};
    const max = typeof feature.maxResults === 'number' ? feature.maxResults : 10;
    return { localizedObjectAnnotations: OBJECTS.slice(0, max) };
  });
  return { status: 200, body: { responses } };
}

function status(code: number, name: string, message: string, headers: Record<string, string> = {}): Reply {
  return { status: code, headers, body: { error: { code, message, status: name } } };
}

function errorReply(code: number): Reply {
  if (code === 403) {
    return status(
      403,
      'PERMISSION_DENIED',
      'Cloud Vision API has not been used in project 0 before or it is disabled.',
    );
  }
  if (code === 429) return status(429, 'RESOURCE_EXHAUSTED', 'Quota exceeded.');
  return code >= 500
    ? status(code, 'INTERNAL', 'Internal error encountered.')
    : status(code, 'INVALID_ARGUMENT', 'Bad request.');
}

function rateLimited(retryAfterSeconds: number): Reply {
  return status(429, 'RESOURCE_EXHAUSTED', 'Quota exceeded.', { 'retry-after': String(retryAfterSeconds) });
}
