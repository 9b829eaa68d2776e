import { type AudioIncoming, type AudioReply, startAudioUpstream } from './audio-harness.ts';
import { chunksOf, playedSeconds, simSegments, simText, simWords, speechBytes } from './audio-model.ts';
import type { Upstream } from './types.ts';

/**
 * OpenAI's audio endpoints (`POST /v1/audio/transcriptions`, multipart; `POST /v1/audio/speech`, JSON in, audio
 * bytes out in chunks). Whisper answers every response_format; the gpt-4o transcribers answer json and text only
 * and report token usage. Groq serves the same format under `/openai/v1`, so one simulator stands for both.
 */
export function startOpenAiAudioUpstream(): Promise<Upstream> {
  return startAudioUpstream({ handle, errorReply, rateLimited });
}

const TRANSCRIBERS = [
  'whisper-1',
  'gpt-4o-transcribe',
  'gpt-4o-mini-transcribe',
  'whisper-large-v3',
  'whisper-large-v3-turbo',
];
const SPEAKERS = ['tts-1', 'tts-1-hd', 'gpt-4o-mini-tts'];
const EXTENSIONS = ['flac', 'm4a', 'mp3', 'mp4', 'mpeg', 'mpga', 'oga', 'ogg', 'wav', 'webm'];
const VOICES = [
  'alloy',
  'ash',
  'ballad',
  'coral',
  'echo',
  'fable',
  'onyx',
  'nova',
  'sage',
  'shimmer',
  'verse',
];
const SPEECH_TYPES: Record<string, string> = {
  mp3: 'audio/mpeg',
  opus: 'audio/ogg',
  aac: 'audio/aac',
  flac: 'audio/flac',
  wav: 'audio/wav',
  pcm: 'audio/pcm',
};

function handle(request: AudioIncoming): AudioReply {
  const route = `${request.method} ${request.path.replace(/^\/openai/, '')}`;
  if (!/^Bearer\s+\S+/i.test(request.headers.authorization ?? '')) return errorReply(401);
  if (route === 'POST /v1/audio/transcriptions') return transcription(request);
  if (route === 'POST /v1/audio/speech') return speech(request);
  return error(404, `Invalid URL (${route})`);
}

function transcription(request: AudioIncoming): AudioReply {
  const field = (name: string) => request.fields[name]?.at(-1);
  const model = field('model');
  if (!model) return error(400, 'you must provide a model parameter', 'model');
  if (!TRANSCRIBERS.includes(model))
    return error(404, `The model \`${model}\` does not exist`, 'model', 'model_not_found');
  const file = request.files.file;
  if (!file) return error(400, "Missing required parameter: 'file'.", 'file');
  const extension = /\.([a-z0-9]+)$/i.exec(file.filename)?.[1]?.toLowerCase() ?? '';
  if (!EXTENSIONS.includes(extension)) {
    return error(400, `Invalid file format. Supported formats: ${JSON.stringify(EXTENSIONS)}`, 'file');
  }
  const seconds = playedSeconds(file.bytes);
  if (seconds === undefined) return error(400, 'Audio file might be corrupted or unsupported', 'file');
  const format = field('response_format') ?? 'json';
  const whisper = model.includes('whisper');
  if (!whisper && format !== 'json' && format !== 'text') {
    return error(
      400,
      `response_format '${format}' is not compatible with model '${model}'. Use 'json' or 'text' instead.`,
      'response_format',
    );
  }
  const text = simText(seconds);
  const duration = { type: 'duration', seconds: Math.ceil(seconds) };
  const tokens = Math.ceil(seconds * 10);
  const usage = whisper
    ? duration
    : {
        type: 'tokens',
        input_tokens: tokens,
        input_token_details: { text_tokens: 0, audio_tokens: tokens },
        output_tokens: 12,
        total_tokens: tokens + 12,
      };
  const segments = simSegments(seconds).map((s, id) => ({
    id,
    seek: 0,
    start: s.start,
    end: s.end,
    text: ` ${s.text}`,
    tokens: [50364, id + 1000],
    temperature: 0,
    avg_logprob: -0.25,
    compression_ratio: 1.1,
    no_speech_prob: 0.01,
  }));
  switch (format) {
    case 'json':
      return { status: 200, body: { text, usage } };
    case 'text':
      return { status: 200, body: `${text}\n` };
    case 'verbose_json': {
      const granularities = request.fields['timestamp_granularities[]'] ?? [];
      return {
        status: 200,
        body: {
          task: 'transcribe',
          language: field('language') ?? 'english',
          duration: Math.round(seconds * 100) / 100,
          text,
          segments,
          ...(granularities.includes('word') ? { words: simWords(seconds) } : {}),
          usage: duration,
        },
      };
    }
    case 'srt':
    case 'vtt':
      return { status: 200, body: segments.map((s) => s.text).join('\n') };
    default:
      return error(400, `Invalid response_format: ${format}`, 'response_format');
  }
}

function speech(request: AudioIncoming): AudioReply {
  const body = request.json as Record<string, unknown> | undefined;
  if (request.invalidJson || typeof body !== 'object' || body === null) {
    return error(400, 'We could not parse the JSON body of your request.');
  }
  if (typeof body.model !== 'string' || !SPEAKERS.includes(body.model)) {
    return error(404, `The model \`${String(body.model)}\` does not exist`, 'model', 'model_not_found');
  }
  if (typeof body.input !== 'string' || body.input.length === 0) {
    return error(400, "Missing required parameter: 'input'.", 'input');
  }
  if (body.input.length > 4096) {
    return error(400, 'String should have at most 4096 characters', 'input');
  }
  if (typeof body.voice !== 'string' || !VOICES.includes(body.voice)) {
    return error(400, `Invalid voice: ${String(body.voice)}`, 'voice');
  }
  if (body.instructions !== undefined && body.model !== 'gpt-4o-mini-tts') {
    return error(400, `instructions are not supported with model '${body.model}'`, 'instructions');
  }
  const format = typeof body.response_format === 'string' ? body.response_format : 'mp3';
  const type = SPEECH_TYPES[format];
  if (!type) return error(400, `Invalid response_format: ${format}`, 'response_format');
  return {
    status: 200,
    headers: { 'content-type': type, 'transfer-encoding': 'chunked' },
    chunks: chunksOf(speechBytes(format, body.input), 5),
  };
}

function error(
  status: number,
  message: string,
  param: string | null = null,
  code: string | null = null,
): AudioReply {
  return { status, body: { error: { message, type: 'invalid_request_error', param, code } } };
}

function errorReply(status: number): AudioReply {
  if (status === 401) return error(401, 'Incorrect API key provided.', null, 'invalid_api_key');
  if (status >= 500)
    return {
      status,
      body: {
        error: {
          message: 'The server had an error while processing your request.',
          type: 'server_error',
          param: null,
          code: null,
        },
      },
    };
  return error(status, 'Bad request');
}

function rateLimited(retryAfterSeconds: number): AudioReply {
  return {
    status: 429,
    headers: { 'retry-after': String(retryAfterSeconds) },
    body: {
      error: {
        message: 'Rate limit reached for requests',
        type: 'requests',
        param: null,
        code: 'rate_limit_exceeded',
      },
    },
  };
}
