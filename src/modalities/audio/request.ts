import { z } from 'zod';
import { SPEECH_FORMATS } from '../../contracts/audio.ts';
import { RequestRefused } from '../../contracts/errors.ts';

export const TRANSCRIPT_FORMATS = ['json', 'text', 'srt', 'verbose_json', 'vtt'] as const;
export type TranscriptFormat = (typeof TRANSCRIPT_FORMATS)[number];

/** Fields both request shapes share, as the multipart text fields give them (strings) or as JSON values. */
const common = {
  model: z.string().min(1),
  language: z.string().min(1).max(32).optional(),
  prompt: z.string().max(10_000).optional(),
  response_format: z.enum(TRANSCRIPT_FORMATS).optional(),
  webhook_url: z.url({ protocol: /^https?$/ }).optional(),
};

const formBoolean = z.enum(['true', 'false']).transform((value) => value === 'true');

/** A number sent as a form field's text; an empty or non-numeric text is refused, not read as 0 or NaN. */
const formNumber = (min: number, max: number) =>
  z
    .string()
    .trim()
    .refine(
      (text) => text !== '' && Number.isFinite(Number(text)),
      `not a number (send one from ${min} to ${max})`,
    )
    .transform(Number)
    .pipe(z.number().min(min).max(max));

/**
 * A multipart transcription request's text fields (the file part is read apart). Repeated fields arrive once (the
 * last value), so `timestamp_granularities[]` only says granularities were asked for.
 */
export const TranscriptionForm = z
  .object({
    ...common,
    temperature: formNumber(0, 1).optional(),
    'timestamp_granularities[]': z.enum(['word', 'segment']).optional(),
    async: formBoolean.optional(),
    stream: formBoolean.optional(),
  })
  .loose();
export type TranscriptionForm = z.infer<typeof TranscriptionForm>;

/** A JSON transcription request: the audio is fetched from `audio_url`. */
export const TranscriptionJson = z
  .object({
    ...common,
    audio_url: z.url({ protocol: /^https?$/ }),
    temperature: z.number().min(0).max(1).optional(),
    timestamp_granularities: z.array(z.enum(['word', 'segment'])).optional(),
    async: z.boolean().optional(),
    stream: z.boolean().optional(),
  })
  .loose();
export type TranscriptionJson = z.infer<typeof TranscriptionJson>;

/** OpenAI's limit on the text of one speech request. */
export const MAX_SPEECH_CHARACTERS = 4096;

export const SpeechRequest = z
  .object({
    model: z.string().min(1),
    input: z
      .string()
      .min(1, 'must not be empty')
      .refine((text) => [...text].length <= MAX_SPEECH_CHARACTERS, {
        message: `at most ${MAX_SPEECH_CHARACTERS} characters`,
      }),
    voice: z.string().min(1).optional(),
    response_format: z.enum(SPEECH_FORMATS).optional(),
    speed: z.number().min(0.25).max(4).optional(),
    instructions: z.string().max(4096).optional(),
  })
  .loose();
export type SpeechRequest = z.infer<typeof SpeechRequest>;

/**
 * A body checked by hand (multipart fields cannot go through the route's schema): the first issue as a 400 naming
 * the field, as the route schemas' refusals do.
 */
export function parseInput<T extends z.ZodType>(schema: T, value: unknown): z.infer<T> {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const field = issue?.path.join('.') || 'body';
  // zod leaves the input out of its issues, so whether the field was sent is looked up in the value itself.
  const missing = issue?.code === 'invalid_type' && valueAt(value, issue.path) === undefined;
  const message = missing ? 'required' : (issue?.message ?? 'invalid');
  throw new RequestRefused('invalid', `'${field}': ${message}`);
}

function valueAt(value: unknown, path: readonly PropertyKey[]): unknown {
  let node = value;
  for (const key of path) {
    if (typeof node !== 'object' || node === null || !Object.hasOwn(node, key)) return undefined;
    node = (node as Record<PropertyKey, unknown>)[key];
  }
  return node;
}
