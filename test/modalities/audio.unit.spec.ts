import { describe, expect, it } from 'vitest';
import { holdSeconds, MAX_HOLD_SECONDS } from '../../src/modalities/audio/pricing.ts';
import { parseInput, TranscriptionForm } from '../../src/modalities/audio/request.ts';
import { timestamp } from '../../src/modalities/audio/transcripts.ts';
import { wavSeconds } from '../../src/modalities/audio/wav.ts';
import { deepgramError } from '../../src/providers/deepgram/api.ts';
import { elevenLabsError } from '../../src/providers/elevenlabs/api.ts';
import { toneWav } from '../upstreams/audio-model.ts';

describe('audio duration for holds', () => {
  it('reads a WAV header, and counts only the bytes present when the header claims more', () => {
    const wav = toneWav(3);
    expect(wavSeconds(wav, wav.length)).toBe(3);
    const cut = wav.subarray(0, 44 + 32_000);
    expect(wavSeconds(cut, cut.length)).toBe(1);
    expect(wavSeconds(Buffer.from('ID3\u0004 not a wav file'), 100)).toBeUndefined();
  });

  it('holds the header duration plus a second, else the bytes at 16 kbit/s, capped at four hours', () => {
    expect(holdSeconds(96_044, 3)).toBe(4);
    expect(holdSeconds(1_000_000, undefined)).toBe(500);
    expect(holdSeconds(10, undefined)).toBe(1);
    expect(holdSeconds(10_000_000_000, undefined)).toBe(MAX_HOLD_SECONDS);
  });
});

describe('transcript rendering and request fields', () => {
  it('writes SubRip and WebVTT times', () => {
    expect(timestamp(3725.5, ',')).toBe('01:02:05,500');
    expect(timestamp(0.0004, '.')).toBe('00:00:00.000');
  });

  it('coerces multipart text fields and names the field it refuses', () => {
    expect(parseInput(TranscriptionForm, { model: 'm', temperature: '0.2', async: 'true' })).toMatchObject({
      temperature: 0.2,
      async: true,
    });
    expect(() => parseInput(TranscriptionForm, { model: 'm', async: 'yes' })).toThrow(/^'async': /);
    expect(() => parseInput(TranscriptionForm, {})).toThrow("'model': required");
  });
});

describe('provider error bodies', () => {
  it("reads Deepgram's and ElevenLabs' shapes", () => {
    expect(deepgramError({ err_code: 'Bad Request', err_msg: 'corrupt audio', request_id: 'r' })).toBe(
      'corrupt audio',
    );
    expect(
      deepgramError({ category: 'INVALID_AUTH', message: 'Invalid credentials.', details: 'Check the key.' }),
    ).toBe('Invalid credentials. Check the key.');
    expect(elevenLabsError({ detail: { status: 'quota_exceeded', message: 'Over quota' } })).toBe(
      'quota_exceeded: Over quota',
    );
    expect(elevenLabsError({ detail: [{ loc: ['body', 'text'], msg: 'Field required' }] })).toBe(
      'body.text: Field required',
    );
  });
});
