import { z } from 'zod';
import { SPEECH_FORMATS } from '../../contracts/audio.ts';
import { QUALITIES } from '../../modalities/images/rules.ts';
import { defineTool } from '../tool.ts';
import { OptionalModel, RequiredModel, Tag } from './common.ts';
import { body, served } from './served.ts';

const HttpUrl = z.url({ protocol: /^https?$/ });

export const generateImageTool = defineTool({
  name: 'generate_image',
  title: 'Generate images',
  description:
    'Generates images from a prompt and returns signed URLs to them, fetchable without a key until they expire ' +
    '(POST /v1/images/generations).',
  access: 'model',
  input: z.object({
    prompt: z.string().min(1),
    model: OptionalModel,
    n: z.number().int().min(1).max(10).optional(),
    size: z
      .string()
      .regex(/^(\d{1,5}x\d{1,5}|auto)$/, 'must be WxH, e.g. 1024x1024')
      .optional(),
    quality: z.enum(QUALITIES).optional(),
    tag: Tag,
  }),
  async run({ tag, ...args }, { twin }) {
    const answer = await twin({
      method: 'POST',
      path: '/v1/images/generations',
      tag,
      body: { ...args, response_format: 'url' },
    });
    const images = body<{ data?: { url?: string; revised_prompt?: string }[] }>(answer).data ?? [];
    return {
      images: images.map((image) => ({
        url: image.url ?? null,
        revised_prompt: image.revised_prompt ?? null,
      })),
      ...served(answer),
    };
  },
});

export const transcribeTool = defineTool({
  name: 'transcribe',
  title: 'Transcribe audio',
  description:
    'Transcribes the audio at a URL the gateway can fetch and returns the text (POST /v1/audio/transcriptions ' +
    'with audio_url).',
  access: 'model',
  input: z.object({
    audio_url: HttpUrl.describe('An http(s) URL of the audio file'),
    model: RequiredModel,
    language: z.string().min(1).max(32).optional().describe('The spoken language, e.g. en'),
    prompt: z.string().max(10_000).optional().describe('Words or context that guide the transcription'),
    tag: Tag,
  }),
  async run({ tag, ...args }, { twin }) {
    const answer = await twin({
      method: 'POST',
      path: '/v1/audio/transcriptions',
      tag,
      body: { ...args, response_format: 'json' },
    });
    return { text: body<{ text?: string }>(answer).text ?? '', ...served(answer) };
  },
});

const EXTENSION: Record<string, string> = { opus: 'ogg', pcm: 'pcm' };

export const speakTool = defineTool({
  name: 'speak',
  title: 'Speak text',
  description:
    'Turns text into speech and returns a signed URL to the audio, fetchable without a key until it expires ' +
    '(POST /v1/audio/speech; the audio is stored like generated images).',
  access: 'model',
  input: z.object({
    input: z.string().min(1).max(4096).describe('The text to speak'),
    model: RequiredModel,
    voice: z.string().min(1).optional(),
    response_format: z.enum(SPEECH_FORMATS).default('mp3'),
    speed: z.number().min(0.25).max(4).optional(),
    instructions: z.string().max(4096).optional(),
    tag: Tag,
  }),
  async run({ tag, ...args }, { twin, publish }) {
    const answer = await twin({ method: 'POST', path: '/v1/audio/speech', tag, body: args });
    const format = args.response_format;
    const signed = await publish(`speech/${answer.requestId}.${EXTENSION[format] ?? format}`, answer.bytes);
    return {
      url: signed.url,
      expires_at: signed.expires_at,
      content_type: answer.headers['content-type'] ?? null,
      bytes: answer.bytes.length,
      ...served(answer),
    };
  },
});
