import { describe, expect, it } from 'vitest';
import { hear, melodyFrames, melodyPcm, noteMsFor } from '../../src/providers/local/tones.ts';

// local/speech's code read back by local/transcribe after the audio was resampled, as an editor or a converter
// would: the notes are found by their times, so no rate's rounding of a note's length drifts them apart.
async function pcmOf(text: string, noteMs: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of melodyPcm(text, noteMs)) chunks.push(chunk);
  return Buffer.concat(chunks);
}

/** Linear interpolation from 24 kHz to `rate`, the last frame cut where the new rate's grid ends. */
function resample(pcm: Buffer, rate: number): Float32Array {
  const input = pcm.length / 2;
  const sample = (i: number) => (i < input ? pcm.readInt16LE(i * 2) / 32768 : 0);
  const out = new Float32Array(Math.floor((input * rate) / 24_000));
  for (let i = 0; i < out.length; i++) {
    const at = (i * 24_000) / rate;
    const low = Math.floor(at);
    out[i] = sample(low) + (sample(low + 1) - sample(low)) * (at - low);
  }
  return out;
}

describe('the tone code of local/speech and local/transcribe', () => {
  it('reads back at the fastest, usual and slowest speeds, resampled to common rates', async () => {
    // Long at the fastest speed, where a rate's rounding of the note length adds up the most.
    for (const [speed, text] of [
      [4, 'Rates and speeds: ok? 👋 '.repeat(8)],
      [1, 'Rates and speeds: ok? 👋'],
      [0.25, 'Slow.'],
    ] as const) {
      const noteMs = noteMsFor(speed);
      const pcm = await pcmOf(text, noteMs);
      expect(pcm.length).toBe(melodyFrames(text, noteMs) * 2);
      for (const rate of [11_025, 16_000, 22_050, 24_000, 44_100, 48_000]) {
        const samples = resample(pcm, rate);
        const heard = await hear({
          sampleRate: rate,
          frames: samples.length,
          window: (from, to) => samples.slice(from, to),
        });
        expect(heard?.text, `speed ${speed} at ${rate} Hz`).toBe(text);
      }
    }
  });

  it('hears nothing in audio that does not carry the code, or whose check fails', async () => {
    const pcm = await pcmOf('checked', noteMsFor(1));
    const samples = resample(pcm, 24_000);
    // One note of the body flipped to another: the CRC-32 no longer matches.
    const at = Math.round(24_000 * 0.3);
    for (let i = 0; i < 720; i++) samples[at + i] = Math.sin((2 * Math.PI * 4186.01 * i) / 24_000) * 0.3;
    const listen = (audio: Float32Array) =>
      hear({ sampleRate: 24_000, frames: audio.length, window: (from, to) => audio.slice(from, to) });
    expect(await listen(samples)).toBeUndefined();
    expect(await listen(new Float32Array(48_000))).toBeUndefined();
  });
});
