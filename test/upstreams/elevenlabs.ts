import { type AudioIncoming, type AudioReply, startAudioUpstream } from './audio-harness.ts';
import { chunksOf, speechBytes } from './audio-model.ts';
import type { Upstream } from './types.ts';

/**
 * ElevenLabs' `POST /v1/text-to-speech/{voice_id}/stream?output_format=...`: JSON `{text, model_id,
 * voice_settings}` in, audio bytes out in chunks; `xi-api-key` header. Refusals are `{detail: {status, message}}`;
 * a body that fails validation is FastAPI's 422 `{detail: [{type, loc, msg, input}]}`.
 */
export function startElevenLabsUpstream(): Promise<Upstream> {
  return startAudioUpstream({ handle, errorReply, rateLimited });
}

export const ELEVENLABS_SIM_VOICES = ['JBFqnCBsd6RMkjVDRZzb', '21m00Tcm4TlvDq8ikWAM'];
const MODELS = ['eleven_multilingual_v2', 'eleven_v3', 'eleven_flash_v2_5', 'eleven_turbo_v2_5'];
const FORMATS: Record<string, string> = {
  mp3_44100_128: 'audio/mpeg',
  mp3_22050_32: 'audio/mpeg',
  opus_48000_128: 'audio/ogg',
  pcm_24000: 'audio/pcm',
  pcm_16000: 'audio/pcm',
};

function handle(request: AudioIncoming): AudioReply {
  const match = /^\/v1\/text-to-speech\/([^/]+)\/stream$/.exec(request.path);
  if (request.method !== 'POST' || !match) return { status: 404, body: { detail: 'Not Found' } };
  if (!request.headers['xi-api-key']) return errorReply(401);
  const voice = decodeURIComponent(match[1] ?? '');
  const body = request.json as Record<string, unknown> | undefined;
  if (request.invalidJson || typeof body !== 'object' || body === null) {
    return validation('body', 'JSON decode error', request.raw.toString('utf8'));
  }
  if (typeof body.text !== 'string') return validation('text', 'Field required', body);
  const format = request.query.output_format ?? 'mp3_44100_128';
  const type = FORMATS[format];
  if (!type) return validation('output_format', `Input should be a valid output format`, format, 'query');
  const speed = (body.voice_settings as { speed?: unknown } | undefined)?.speed;
  if (typeof speed === 'number' && (speed < 0.7 || speed > 1.2)) {
    return validation('speed', 'Input should be between 0.7 and 1.2', speed);
  }
  if (!ELEVENLABS_SIM_VOICES.includes(voice)) {
    return refusal(404, 'voice_not_found', `A voice with the voice_id ${voice} was not found.`);
  }
  const model = typeof body.model_id === 'string' ? body.model_id : 'eleven_multilingual_v2';
  if (!MODELS.includes(model))
    return refusal(400, 'model_not_found', `A model with model ID ${model} does not exist.`);
  return {
    status: 200,
    headers: {
      'content-type': type,
      'transfer-encoding': 'chunked',
      'request-id': 'sim-request',
      'x-character-count': String([...body.text].length),
    },
    chunks: chunksOf(speechBytes(format, body.text), 4),
  };
}

function refusal(
  status: number,
  code: string,
  message: string,
  headers: Record<string, string> = {},
): AudioReply {
  return { status, headers, body: { detail: { status: code, message } } };
}

function validation(field: string, msg: string, input: unknown, where = 'body'): AudioReply {
  return { status: 422, body: { detail: [{ type: 'missing', loc: [where, field], msg, input }] } };
}

function errorReply(status: number): AudioReply {
  if (status === 401) return refusal(401, 'invalid_api_key', 'Invalid API key');
  if (status === 402) return refusal(402, 'quota_exceeded', 'This request exceeds your quota.');
  return refusal(
    status,
    status >= 500 ? 'internal_error' : 'bad_request',
    status >= 500 ? 'Internal error' : 'Bad request',
  );
}

function rateLimited(retryAfterSeconds: number): AudioReply {
  return refusal(429, 'too_many_concurrent_requests', 'Too many concurrent requests for your subscription.', {
    'retry-after': String(retryAfterSeconds),
  });
}
