import OpenAI, { toFile } from 'openai';
import { type Browser, chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ceilDiv, type PriceLine } from '../../src/contracts/money.ts';
import { eventually, startTestGateway, type TestGateway } from '../support/gateway.ts';
import { type Json, json } from '../support/json.ts';
import { foreignWav, readPng, readyPng, resampledFloatWav } from './local-media-files.ts';
import { centsFor, freshTag } from './support.ts';

// The built-in test models of the media endpoints, on a gateway with no provider key at all, through the openai
// SDK: local/image draws real PNGs, local/speech speaks real WAV (or PCM) that local/transcribe reads back.
let gateway: TestGateway;
let key: string;
let client: OpenAI;
let browser: Browser;

beforeAll(async () => {
  [gateway, browser] = await Promise.all([
    startTestGateway({}, { workerIntervalsMs: { jobs: 50 } }),
    chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox'] }),
  ]);
  const account = await json(await gateway.admin('/accounts', { name: 'keyless media' }));
  await gateway.admin(`/accounts/${account.account_id}/top-ups`, { cents: 1_000, reference: 'funding' });
  key = account.key;
  client = new OpenAI({ apiKey: key, baseURL: `${gateway.url}/v1`, maxRetries: 0 });
});
afterAll(async () => {
  await browser?.close();
  await gateway?.close();
});

const auth = () => ({ authorization: `Bearer ${key}` });
const tagged = (tag: string) => ({ headers: { 'x-gw-tag': tag } });

async function usageOf(tag: string): Promise<Json> {
  const report = await eventually(
    async () => json(await fetch(`${gateway.url}/v1/usage/by-tag`, { headers: auth() })),
    (r) => r.data.some((row: Json) => row.tag === tag),
    3000,
  );
  return report.data.find((row: Json) => row.tag === tag);
}

async function expectCharged(tag: string, headerCents: string | null, lines: PriceLine[], units: number) {
  const cents = centsFor(lines);
  expect(Number(headerCents)).toBe(cents);
  const row = await usageOf(tag);
  expect(row).toMatchObject({ requests: 1, units });
  expect(row.cost_cents).toBeCloseTo(cents, 7);
}

const perUnit = (item: string, dollars: string, quantity: number): PriceLine => ({
  item,
  quantity,
  unitPriceNanosPerMillion: BigInt(Math.round(Number(dollars) * 1e9)) * 1_000_000n,
});
/** Transcription: whole seconds at the per-minute price, as the gateway bills every transcriber. */
const audioSeconds = (seconds: number): PriceLine => ({
  item: 'audio_seconds',
  quantity: seconds,
  unitPriceNanosPerMillion: ceilDiv(6_000_000n * 1_000_000n, 60n),
});

describe('local/image', () => {
  it('generates a real PNG of the size asked, the same for the same prompt, that Chromium decodes', async () => {
    const tag = freshTag('local-image');
    const { data, response } = await client.images
      .generate(
        {
          model: 'local/image',
          prompt: 'a red fox in the snow',
          size: '512x512',
          response_format: 'b64_json',
        },
        tagged(tag),
      )
      .withResponse();
    expect(response.headers.get('x-model')).toBe('local/image');
    const png = Buffer.from(data.data?.[0]?.b64_json as string, 'base64');
    const image = readPng(png);
    expect(image).toMatchObject({ width: 512, height: 512, colourType: 2 });
    expect(image.text.Description).toBe('a red fox in the snow');
    await expectCharged(
      tag,
      response.headers.get('x-cost-cents'),
      [perUnit('image:512x512:standard', '0.018', 1)],
      1,
    );

    // Chromium's own decoder reads it, pixel for pixel as the IDAT stream holds them.
    const page = await browser.newPage();
    const points: [number, number][] = [
      [0, 0],
      [100, 300],
      [511, 511],
    ];
    // The test's tsconfig has no DOM types: the page's code is sent as text.
    const decoded = await page.evaluate(`(async () => {
      const img = new Image();
      img.src = 'data:image/png;base64,${png.toString('base64')}';
      await img.decode();
      const canvas = document.createElement('canvas');
      canvas.width = img.naturalWidth;
      canvas.height = img.naturalHeight;
      const context = canvas.getContext('2d');
      context.drawImage(img, 0, 0);
      const pixels = ${JSON.stringify(points)}.map(([x, y]) => [...context.getImageData(x, y, 1, 1).data.slice(0, 3)]);
      return { width: img.naturalWidth, height: img.naturalHeight, pixels };
    })()`);
    await page.close();
    expect(decoded).toEqual({ width: 512, height: 512, pixels: points.map(([x, y]) => image.pixel(x, y)) });

    const again = await client.images.generate({
      model: 'local/image',
      prompt: 'a red fox in the snow',
      size: '512x512',
      response_format: 'b64_json',
    });
    expect(again.data?.[0]?.b64_json).toBe(data.data?.[0]?.b64_json);
    const other = await client.images.generate({
      model: 'local/image',
      prompt: 'a blue whale',
      size: '512x512',
      response_format: 'b64_json',
    });
    expect(other.data?.[0]?.b64_json).not.toBe(data.data?.[0]?.b64_json);
  });

  it('answers signed URLs by default, n different images, 256 px unless asked; with no model named it is the default', async () => {
    const tag = freshTag('local-image-n');
    const { data, response } = await client.images
      .generate({ prompt: 'two cats', n: 2 }, tagged(tag))
      .withResponse();
    expect(response.headers.get('x-model')).toBe('local/image');
    const urls = (data.data ?? []).map((item) => item.url as string);
    expect(urls).toHaveLength(2);
    const pngs = await Promise.all(
      urls.map(async (url) => {
        const fetched = await fetch(url);
        expect(fetched.headers.get('content-type')).toBe('image/png');
        return Buffer.from(await fetched.arrayBuffer());
      }),
    );
    for (const png of pngs) expect(readPng(png)).toMatchObject({ width: 256, height: 256 });
    expect(pngs[0]?.equals(pngs[1] as Buffer)).toBe(false);
    await expectCharged(
      tag,
      response.headers.get('x-cost-cents'),
      [perUnit('image:256x256:standard', '0.016', 2)],
      2,
    );
  });

  it('edits: a PNG drawn from the prompt and the source image', async () => {
    const source = Buffer.from(
      (await client.images.generate({ model: 'local/image', prompt: 'source', response_format: 'b64_json' }))
        .data?.[0]?.b64_json as string,
      'base64',
    );
    const edit = async (image: Buffer) =>
      client.images.edit({
        model: 'local/image',
        image: await toFile(image, 'source.png', { type: 'image/png' }),
        prompt: 'add a hat',
        size: '256x256',
        response_format: 'b64_json',
      });
    const edited = Buffer.from((await edit(source)).data?.[0]?.b64_json as string, 'base64');
    expect(readPng(edited)).toMatchObject({ width: 256, height: 256, text: { Description: 'add a hat' } });
    const fromAnother = (await edit(readyPng())).data?.[0]?.b64_json;
    expect(fromAnother).not.toBe(edited.toString('base64'));
  });

  it('refuses what DALL·E 2 would refuse, naming the field', async () => {
    const refused = await fetch(`${gateway.url}/v1/images/generations`, {
      method: 'POST',
      headers: { ...auth(), 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'local/image', prompt: 'p', size: '300x300' }),
    });
    expect(refused.status).toBe(400);
    expect((await json(refused)).error.message).toMatch(
      /^'size': local\/image takes 256x256, 512x512, 1024x1024/,
    );
  });
});

describe('local/speech and local/transcribe', () => {
  const TEXT = 'Hello there, gateway! Ça va? 你好 👋';

  it('speak real WAV audio that transcribes back to the text, each billed as its hosted twin', async () => {
    const speechTag = freshTag('local-speech');
    const { data: spoken, response } = await client.audio.speech
      .create({ model: 'local/speech', voice: 'alloy', input: TEXT }, tagged(speechTag))
      .withResponse();
    // No response_format: WAV, the one container local/speech writes (OpenAI's default, mp3, it cannot encode).
    expect(response.headers.get('content-type')).toBe('audio/wav');
    const wav = Buffer.from(await spoken.arrayBuffer());
    const characters = [...TEXT].length;
    await expectCharged(
      speechTag,
      response.headers.get('x-cost-cents'),
      [perUnit('characters', '0.000015', characters)],
      characters,
    );

    // Chromium's audio decoder reads it: 24 kHz, as long as the header says.
    const seconds = (wav.length - 44) / 48_000;
    const page = await browser.newPage();
    const decoded: Json = await page.evaluate(`(async () => {
      const bytes = Uint8Array.from(atob('${wav.toString('base64')}'), (c) => c.charCodeAt(0));
      const audio = await new OfflineAudioContext(1, 1, 24000).decodeAudioData(bytes.buffer);
      const samples = audio.getChannelData(0);
      let loudest = 0;
      for (const sample of samples) loudest = Math.max(loudest, Math.abs(sample));
      return { rate: audio.sampleRate, frames: audio.length, loudest };
    })()`);
    await page.close();
    expect(decoded.rate).toBe(24_000);
    expect(decoded.frames).toBe(seconds * 24_000);
    expect(decoded.loudest).toBeGreaterThan(0.2);

    const transcribeTag = freshTag('local-transcribe');
    const { data: transcript, response: heard } = await client.audio.transcriptions
      .create(
        {
          model: 'local/transcribe',
          file: await toFile(wav, 'speech.wav'),
          response_format: 'verbose_json',
          timestamp_granularities: ['word', 'segment'],
        },
        tagged(transcribeTag),
      )
      .withResponse();
    expect(transcript.text).toBe(TEXT);
    expect(transcript.duration).toBeCloseTo(seconds, 6);
    expect(transcript.segments?.map((s) => s.text)).toEqual(['Hello there, gateway!', 'Ça va?', '你好 👋']);
    expect(transcript.words?.map((w) => w.word)).toEqual(TEXT.split(' '));
    const words = transcript.words ?? [];
    for (const [i, word] of words.entries()) {
      expect(word.end).toBeGreaterThan(word.start);
      if (i > 0) expect(word.start).toBeGreaterThan(words[i - 1]?.end as number);
    }
    expect(words.at(-1)?.end).toBeLessThanOrEqual(seconds);
    await expectCharged(
      transcribeTag,
      heard.headers.get('x-cost-cents'),
      [audioSeconds(Math.ceil(seconds))],
      Math.ceil(seconds),
    );
  });

  it('round-trips raw PCM and the slowest and fastest speeds', async () => {
    for (const [format, speed] of [
      ['pcm', undefined],
      ['wav', 4],
      ['wav', 0.25],
    ] as const) {
      const spoken = await client.audio.speech.create({
        model: 'local/speech',
        voice: 'nova',
        input: 'Round trip.',
        response_format: format,
        speed,
      });
      const audio = Buffer.from(await spoken.arrayBuffer());
      const transcript = await client.audio.transcriptions.create({
        model: 'local/transcribe',
        file: await toFile(audio, `speech.${format}`),
      });
      expect(transcript.text, `${format} at speed ${speed}`).toBe('Round trip.');
    }
  });

  it('reads its audio resampled to 44.1 kHz stereo float, as an editor would save it', async () => {
    const spoken = await client.audio.speech.create({
      model: 'local/speech',
      voice: 'alloy',
      input: 'Resampled.',
    });
    const source = Buffer.from(await spoken.arrayBuffer());
    const transcript = await client.audio.transcriptions.create({
      model: 'local/transcribe',
      file: await toFile(resampledFloatWav(source, 44_100), 'edited.wav'),
    });
    expect(transcript.text).toBe('Resampled.');
  });

  it('refuses a format it cannot encode, naming response_format', async () => {
    const response = await fetch(`${gateway.url}/v1/audio/speech`, {
      method: 'POST',
      headers: { ...auth(), 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'local/speech', input: 'x', response_format: 'mp3' }),
    });
    expect(response.status).toBe(400);
    expect((await json(response)).error.message).toBe(
      "'response_format': local/speech produces wav, pcm, not mp3",
    );
  });

  it('transcribes other audio as its length, billed by it (measured for WAV, estimated otherwise)', async () => {
    const tag = freshTag('local-foreign');
    const { data, response } = await client.audio.transcriptions
      .create({ model: 'local/transcribe', file: await toFile(foreignWav(2.5), 'tone.wav') }, tagged(tag))
      .withResponse();
    expect(data).toEqual({ text: '[audio of 2.5 seconds]', usage: { type: 'duration', seconds: 2.5 } });
    await expectCharged(tag, response.headers.get('x-cost-cents'), [audioSeconds(3)], 3);

    const notWav = await client.audio.transcriptions.create({
      model: 'local/transcribe',
      file: await toFile(Buffer.alloc(8000, 7), 'voice.mp3'),
    });
    expect(notWav.text).toMatch(/^\[audio local\/transcribe cannot read/);
    expect(notWav.usage).toEqual({ type: 'duration', seconds: 2, estimated: true });
  });

  it('transcribes asynchronously as a job, through the same model', async () => {
    const spoken = await client.audio.speech.create({
      model: 'local/speech',
      voice: 'alloy',
      input: 'As a job.',
    });
    const form = new FormData();
    form.append('file', new Blob([await spoken.arrayBuffer()], { type: 'audio/wav' }), 'job.wav');
    form.append('model', 'local/transcribe');
    form.append('async', 'true');
    const accepted = await fetch(`${gateway.url}/v1/audio/transcriptions`, {
      method: 'POST',
      headers: auth(),
      body: form,
    });
    expect(accepted.status).toBe(202);
    const { id } = await json(accepted);
    const job = await eventually(
      async () => json(await fetch(`${gateway.url}/v1/jobs/${id}`, { headers: auth() })),
      (j) => j.status === 'completed' || j.status === 'failed',
      10_000,
    );
    expect(job).toMatchObject({ status: 'completed', model: 'local/transcribe' });
    expect(job.result.transcript.text).toBe('As a job.');
  });
});

describe('GET /v1/models', () => {
  it('lists the three as available test models with per-unit prices', async () => {
    const list: Json = await json(
      await fetch(`${gateway.url}/v1/models?provider=local`, { headers: auth() }),
    );
    const byId = new Map<string, Json>(list.data.map((m: Json) => [m.id, m]));
    expect(byId.get('local/image')).toMatchObject({
      available: true,
      modality: 'image',
      capabilities: ['image-generation', 'image-editing'],
      description: expect.stringMatching(/^Test model/),
      pricing: { per_unit_usd: { 'image:256x256:standard': 0.016, 'image:1024x1024:standard': 0.02 } },
    });
    expect(byId.get('local/speech')).toMatchObject({
      available: true,
      modality: 'audio-tts',
      description: expect.stringMatching(/^Test model/),
      pricing: { per_unit_usd: { character: 0.000015 } },
    });
    expect(byId.get('local/transcribe')).toMatchObject({
      available: true,
      modality: 'audio-stt',
      description: expect.stringMatching(/^Test model/),
      pricing: { per_unit_usd: { audio_minute: 0.006 } },
    });
    for (const id of ['local/image', 'local/speech', 'local/transcribe']) {
      expect(byId.get(id)?.pricing.notes.join(' ')).toMatch(/a test model, priced like openai\//);
    }
  });
});
