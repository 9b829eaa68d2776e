import type { SpeechFormat } from '../../contracts/audio.ts';
import { RequestRefused } from '../../contracts/errors.ts';
import { type ModalityDeps, pricedCall, type RequestContext, type Served } from '../../pipeline/priced.ts';
import { resolveModalityModel } from '../models.ts';
import { speechEndpoint } from './endpoint.ts';
import { characterCount, charactersLine } from './pricing.ts';
import type { SpeechRequest } from './request.ts';

/** The Content-Type each format is served with, whatever the provider labelled it. */
export const SPEECH_CONTENT_TYPES: Readonly<Record<SpeechFormat, string>> = {
  mp3: 'audio/mpeg',
  opus: 'audio/ogg',
  aac: 'audio/aac',
  flac: 'audio/flac',
  wav: 'audio/wav',
  pcm: 'audio/pcm',
};

export interface SpeechAudio {
  /** The provider's bytes, not yet read: the route streams them to the client as they arrive. */
  audio: AsyncIterable<Uint8Array>;
  format: SpeechFormat;
  contentType: string;
}

/**
 * Speaks the input, billed per character. The characters are known before the call, so the charge is held and
 * settled as soon as the provider accepts the request (its response headers), before any audio is streamed: a
 * client that leaves mid-stream has been billed what the provider bills, and nothing is left open.
 */
export async function createSpeech(
  deps: ModalityDeps,
  context: RequestContext,
  body: SpeechRequest,
): Promise<Served<SpeechAudio>> {
  const target = resolveModalityModel(deps, speechEndpoint, body.model);
  const { adapter, model } = target;
  const format = body.response_format ?? adapter.defaultFormat ?? 'mp3';
  if (!adapter.formats.includes(format)) {
    throw new RequestRefused(
      'invalid',
      `'response_format': ${model.id} produces ${adapter.formats.join(', ')}, not ${format}`,
    );
  }
  if (body.speed !== undefined && (body.speed < adapter.speed.min || body.speed > adapter.speed.max)) {
    throw new RequestRefused(
      'invalid',
      `'speed': ${model.id} takes ${adapter.speed.min} to ${adapter.speed.max}`,
    );
  }
  if (body.instructions !== undefined && !adapter.instructions) {
    throw new RequestRefused('invalid', `'instructions': ${model.id} takes no instructions`);
  }
  const characters = characterCount(body.input);
  const line = charactersLine(model, characters);
  return pricedCall(
    deps,
    context,
    target,
    [line],
    async (upstream): Promise<SpeechAudio> => ({
      audio: await adapter.speak({
        input: body.input,
        voice: body.voice,
        format,
        speed: body.speed,
        instructions: body.instructions,
        upstream,
        signal: context.signal,
      }),
      format,
      contentType: SPEECH_CONTENT_TYPES[format],
    }),
    // The input's characters are exactly what these providers bill: nothing here is estimated.
    () => ({ lines: [line], usageReported: true, units: characters }),
  );
}
