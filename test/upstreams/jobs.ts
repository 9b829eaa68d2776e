import { type Incoming, type Provider, type Reply, startUpstream } from './harness.ts';
import type { Upstream } from './types.ts';

/** The bytes each provider's result carries, so a test can compare what the gateway stored. */
export const VIDEO_BYTES = 'ftypisom-fake-mp4-video';
export const MUSIC_BYTES = 'ID3-fake-mp3-music';
export const MODEL_BYTES = 'glTF-fake-glb-model';

export interface JobProviders extends Upstream {
  /** How many polls a video operation or a 3D task stays pending before it is done. */
  pendingPolls: number;
  /**
   * Keys the providers accept besides their own (an account's own key, registered with the gateway). A Meshy task
   * answers only the key that created it: another key's poll gets Meshy's 404, as another organization's would.
   */
  keys: Set<string>;
}

const GOOGLE_KEY = 'upstream-google';
const ELEVENLABS_KEY = 'upstream-elevenlabs';
const MESHY_KEY = 'upstream-meshy';

/**
 * One simulator for the three asynchronous providers, each in its documented format: Google's Veo through the
 * Gemini API (predictLongRunning, operations polled by name, the video downloaded from the sample's URI),
 * ElevenLabs' compose (`POST /v1/music` answering MP3 bytes), and Meshy's text-to-3D (a task id, the task polled
 * until SUCCEEDED, the GLB on an asset URL). A prompt containing `provider-fail` makes the provider fail the work;
 * a music prompt containing `slow-compose` is answered after 1.5 s.
 */
export async function startJobProviders(): Promise<JobProviders> {
  let base = '';
  const polls = new Map<string, number>();
  const prompts = new Map<string, string>();
  const owners = new Map<string, string>();
  const keys = new Set<string>();
  const meshyKey = (headers: Record<string, string>) =>
    headers.authorization?.replace(/^Bearer\s+/i, '') ?? '';
  let upstream: JobProviders;

  const googleError = (status: number, message: string): Reply => ({
    status,
    body: { error: { code: status, message, status: status === 429 ? 'RESOURCE_EXHAUSTED' : 'INTERNAL' } },
  });

  const provider: Provider = {
    handle(request: Incoming): Reply {
      const { path, method, headers } = request;
      const body = (request.body ?? {}) as Record<string, unknown>;
      const veo = /^\/v1beta\/models\/([^/:]+):predictLongRunning$/.exec(path);
      if (veo && method === 'POST') {
        if (headers['x-goog-api-key'] !== GOOGLE_KEY) return googleError(403, 'API key not valid.');
        const instance = (body.instances as { prompt?: string }[] | undefined)?.[0];
        if (!instance?.prompt) return googleError(400, 'prompt is required');
        const name = `models/${veo[1]}/operations/op${request.seq}`;
        prompts.set(name, instance.prompt);
        return { status: 200, body: { name } };
      }
      if (path.startsWith('/v1beta/models/') && path.includes('/operations/') && method === 'GET') {
        const name = path.slice('/v1beta/'.length);
        const prompt = prompts.get(name);
        if (prompt === undefined) return googleError(404, 'operation not found');
        const seen = (polls.get(name) ?? 0) + 1;
        polls.set(name, seen);
        if (seen <= upstream.pendingPolls) return { status: 200, body: { name, done: false } };
        if (prompt.includes('provider-fail')) {
          return {
            status: 200,
            body: { name, done: true, error: { code: 13, message: 'Video generation failed' } },
          };
        }
        const file = name.split('/').pop();
        return {
          status: 200,
          body: {
            name,
            done: true,
            response: {
              '@type': 'type.googleapis.com/google.ai.generativelanguage.v1beta.PredictLongRunningResponse',
              generateVideoResponse: {
                generatedSamples: [{ video: { uri: `${base}/v1beta/files/${file}:download?alt=media` } }],
              },
            },
          },
        };
      }
      if (path.startsWith('/v1beta/files/') && method === 'GET') {
        if (headers['x-goog-api-key'] !== GOOGLE_KEY) return googleError(403, 'API key not valid.');
        return { status: 200, headers: { 'content-type': 'video/mp4' }, chunks: [VIDEO_BYTES] };
      }
      if (path === '/v1/music' && method === 'POST') {
        const xiKey = headers['xi-api-key'] ?? '';
        if (xiKey !== ELEVENLABS_KEY && !keys.has(xiKey)) {
          return { status: 401, body: { detail: { status: 'invalid_api_key', message: 'Invalid API key' } } };
        }
        if (typeof body.prompt !== 'string') {
          return {
            status: 422,
            body: {
              detail: [{ loc: ['body', 'prompt'], msg: 'field required', type: 'value_error.missing' }],
            },
          };
        }
        if (body.prompt.includes('provider-fail')) {
          return {
            status: 500,
            body: { detail: { status: 'internal_error', message: 'Composition failed' } },
          };
        }
        // `slow-compose`: the composition takes a while, so a cancellation can arrive meanwhile.
        const delayMs = body.prompt.includes('slow-compose') ? 1_500 : 0;
        return { status: 200, headers: { 'content-type': 'audio/mpeg' }, chunks: [MUSIC_BYTES], delayMs };
      }
      if (path === '/openapi/v2/text-to-3d' && method === 'POST') {
        const caller = meshyKey(headers);
        if (caller !== MESHY_KEY && !keys.has(caller))
          return { status: 401, body: { message: 'Invalid API key' } };
        if (body.mode !== 'preview' || typeof body.prompt !== 'string')
          return { status: 400, body: { message: 'Invalid mode or prompt' } };
        const id = `0193-task-${request.seq}`;
        prompts.set(id, body.prompt);
        owners.set(id, caller);
        return { status: 202, body: { result: id } };
      }
      const task = /^\/openapi\/v2\/text-to-3d\/([^/]+)$/.exec(path);
      if (task?.[1]) {
        const id = task[1];
        const prompt = prompts.get(id);
        if (prompt === undefined || owners.get(id) !== meshyKey(headers))
          return { status: 404, body: { message: 'Task not found' } };
        if (method === 'DELETE') {
          prompts.set(id, `${prompt} canceled`);
          return { status: 200, body: {} };
        }
        // `provider-lost`: the provider took the task, then no longer knows it.
        if (prompt.includes('provider-lost')) return { status: 404, body: { message: 'Task not found' } };
        const seen = (polls.get(id) ?? 0) + 1;
        polls.set(id, seen);
        const common = { id, mode: 'preview', prompt, progress: 0, created_at: Date.now() };
        if (prompt.endsWith(' canceled')) return { status: 200, body: { ...common, status: 'CANCELED' } };
        if (seen <= upstream.pendingPolls)
          return { status: 200, body: { ...common, status: 'IN_PROGRESS', progress: 50 } };
        if (prompt.includes('provider-fail')) {
          return {
            status: 200,
            body: {
              ...common,
              status: 'FAILED',
              // `provider-fail-nul`: the provider's words hold what PostgreSQL cannot store.
              task_error: {
                message: prompt.includes('provider-fail-nul')
                  ? 'Mesh \u0000 failed \ud800'
                  : 'Mesh generation failed',
              },
            },
          };
        }
        return {
          status: 200,
          body: {
            ...common,
            status: 'SUCCEEDED',
            progress: 100,
            model_urls: { glb: `${base}/assets/${id}.glb` },
            task_error: { message: '' },
          },
        };
      }
      if (path.startsWith('/assets/') && method === 'GET') {
        return { status: 200, headers: { 'content-type': 'model/gltf-binary' }, chunks: [MODEL_BYTES] };
      }
      return { status: 404, body: { error: { message: `no route ${method} ${path}` } } };
    },
    errorReply: (status) => ({
      status,
      body: { error: { code: status, message: 'Internal error', status: 'INTERNAL' } },
    }),
    rateLimited: (retryAfterSeconds) => ({
      status: 429,
      headers: { 'retry-after': String(retryAfterSeconds) },
      body: { error: { code: 429, message: 'Resource has been exhausted', status: 'RESOURCE_EXHAUSTED' } },
    }),
  };
  const started = await startUpstream(provider);
  base = started.url;
  upstream = Object.assign(started, { pendingPolls: 1, keys });
  return upstream;
}

export const jobProviderEnv = (url: string): Record<string, string> => ({
  GOOGLE_API_KEY: GOOGLE_KEY,
  GOOGLE_BASE_URL: url,
  ELEVENLABS_API_KEY: ELEVENLABS_KEY,
  ELEVENLABS_BASE_URL: url,
  MESHY_API_KEY: MESHY_KEY,
  MESHY_BASE_URL: url,
});
