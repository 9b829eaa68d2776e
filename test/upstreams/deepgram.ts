import { createHash } from 'node:crypto';
import { type AudioIncoming, type AudioReply, startAudioUpstream } from './audio-harness.ts';
import { playedSeconds, simSegments, simWords } from './audio-model.ts';
import type { Upstream } from './types.ts';

/**
 * Deepgram's pre-recorded `POST /v1/listen`: the audio is the raw request body (or JSON `{url}`, which this
 * simulator refuses, having no internet), options in the query (`model`, `language` or `detect_language`,
 * `punctuate`, `utterances`), `Authorization: Token <key>`. Errors are `{err_code, err_msg, request_id}`.
 */
export function startDeepgramUpstream(): Promise<Upstream> {
  return startAudioUpstream({ handle, errorReply, rateLimited });
}

const MODELS = ['nova-3', 'nova-2', 'nova', 'enhanced', 'base'];
const REQUEST_ID = '5b1c9a5e-0000-4000-8000-00000000000';

function handle(request: AudioIncoming): AudioReply {
  if (`${request.method} ${request.path}` !== 'POST /v1/listen') return error(404, 'Not Found', 'Not Found');
  if (!/^Token\s+\S+/.test(request.headers.authorization ?? '')) return errorReply(401);
  const model = request.query.model ?? 'base';
  if (!MODELS.includes(model)) {
    return error(400, 'Bad Request', 'No such model/language/tier combination found.');
  }
  if ((request.headers['content-type'] ?? '').startsWith('application/json')) {
    return error(400, 'Bad Request', 'Bad Request: failed to download the audio from the URL.');
  }
  const seconds = playedSeconds(request.raw);
  if (seconds === undefined) {
    return error(400, 'Bad Request', 'Bad Request: failed to process audio: corrupt or unsupported data');
  }
  const punctuate = request.query.punctuate === 'true';
  const plain = (text: string) => (punctuate ? text : text.toLowerCase().replace(/[.,!?]/g, ''));
  const words = simWords(seconds).map((w) => ({
    word: w.word.toLowerCase().replace(/[.,!?]/g, ''),
    start: w.start,
    end: w.end,
    confidence: 0.98,
    ...(punctuate ? { punctuated_word: w.word } : {}),
  }));
  const segments = simSegments(seconds);
  const transcript = plain(segments.map((s) => s.text).join(' '));
  const duration = Math.round(seconds * 1000) / 1000;
  return {
    status: 200,
    body: {
      metadata: {
        transaction_key: 'deprecated',
        request_id: `${REQUEST_ID}${request.seq % 10}`,
        sha256: createHash('sha256').update(request.raw).digest('hex'),
        created: new Date().toISOString(),
        duration,
        channels: 1,
        models: ['1abfe86b-e047-4eed-858a-35e5625b41ee'],
        model_info: {
          '1abfe86b-e047-4eed-858a-35e5625b41ee': {
            name: `general-${model}`,
            version: '2024-01-01',
            arch: model,
          },
        },
      },
      results: {
        channels: [
          {
            ...(request.query.detect_language === 'true'
              ? { detected_language: 'en', language_confidence: 0.99 }
              : {}),
            alternatives: [{ transcript, confidence: 0.98, words }],
          },
        ],
        ...(request.query.utterances === 'true'
          ? {
              utterances: segments.map((s, i) => ({
                start: s.start,
                end: s.end,
                confidence: 0.97,
                channel: 0,
                transcript: plain(s.text),
                words: words.filter((w) => w.start >= s.start && w.end <= s.end + 1e-9),
                speaker: 0,
                id: `utt-${i}`,
              })),
            }
          : {}),
      },
    },
  };
}

function error(
  status: number,
  code: string,
  message: string,
  headers: Record<string, string> = {},
): AudioReply {
  return { status, headers, body: { err_code: code, err_msg: message, request_id: `${REQUEST_ID}0` } };
}

function errorReply(status: number): AudioReply {
  if (status === 401) return error(401, 'INVALID_AUTH', 'Invalid credentials.');
  if (status === 402)
    return error(402, 'ASR_PAYMENT_REQUIRED', 'Project does not have enough credits for an ASR request.');
  return error(
    status,
    status >= 500 ? 'INTERNAL_SERVER_ERROR' : 'Bad Request',
    status >= 500 ? 'Internal server error.' : 'Bad Request',
  );
}

function rateLimited(retryAfterSeconds: number): AudioReply {
  return error(429, 'TOO_MANY_REQUESTS', 'Too many requests. Please try again later.', {
    'retry-after': String(retryAfterSeconds),
  });
}
