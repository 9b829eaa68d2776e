import { z } from 'zod';

/** Deepgram's raw and compressed encodings; omitted, the audio is a container (WAV, WebM, ...) the provider reads. */
export const ENCODINGS = [
  'linear16',
  'linear32',
  'flac',
  'alaw',
  'mulaw',
  'amr-nb',
  'amr-wb',
  'opus',
  'ogg-opus',
  'speex',
  'g729',
] as const;
export type Encoding = (typeof ENCODINGS)[number];

/** Bytes per sample of the encodings whose duration follows from their size. */
export const PCM_BYTES_PER_SAMPLE: Partial<Record<Encoding, number>> = {
  linear16: 2,
  linear32: 4,
  mulaw: 1,
  alaw: 1,
};

const flag = z.enum(['true', 'false']).transform((value) => value === 'true');
const count = (min: number, max: number) => z.coerce.number().int().min(min).max(max);

/** The query of `GET /v1/realtime` (the key, `api_key`, is taken out before this is read). */
export const RealtimeQuery = z
  .object({
    model: z.string().min(1).max(200).optional(),
    encoding: z.enum(ENCODINGS).optional(),
    sample_rate: count(1000, 384_000).optional(),
    channels: count(1, 16).optional(),
    interim_results: flag.optional(),
    language: z
      .string()
      .regex(/^[A-Za-z]{2,3}(-[A-Za-z0-9]{1,8})*$|^multi$/, 'a BCP-47 language tag such as en or en-US')
      .optional(),
    /** The cost tag, for clients that cannot send the `x-gw-tag` header (browsers). */
    tag: z.string().optional(),
  })
  .refine((query) => query.encoding === undefined || query.sample_rate !== undefined, {
    path: ['sample_rate'],
    message: 'required when encoding is given (raw audio carries no rate of its own)',
  });
export type RealtimeQuery = z.infer<typeof RealtimeQuery>;
