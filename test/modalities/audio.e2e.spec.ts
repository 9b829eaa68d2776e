import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ceilDiv, dollarsPerMillion, type PriceLine } from '../../src/contracts/money.ts';
import { eventually, startTestGateway, type TestGateway } from '../support/gateway.ts';
import { holdsOf as holdsOfRequest } from '../support/holds.ts';
import { type Json, json } from '../support/json.ts';
import { playedSeconds, simSegments, simText, speechBytes, toneWav } from '../upstreams/audio-model.ts';
import { startDeepgramUpstream } from '../upstreams/deepgram.ts';
import { startElevenLabsUpstream } from '../upstreams/elevenlabs.ts';
import { startOpenAiAudioUpstream } from '../upstreams/openai-audio.ts';
import type { Upstream } from '../upstreams/types.ts';
import { centsFor, freshTag } from './support.ts';

const MAX_BYTES = 400_000;
/** 2.5 s of 16 kHz 16-bit mono: 80,044 bytes. */
const wav = toneWav(2.5);
const wav2 = toneWav(2);

let gateway: TestGateway;
let key: string;
let client: OpenAI;
let sims: { openai: Upstream; deepgram: Upstream; elevenlabs: Upstream };
let files: Server;
let filesUrl: string;

beforeAll(async () => {
  const [openai, deepgram, elevenlabs] = await Promise.all([
    startOpenAiAudioUpstream(),
    startDeepgramUpstream(),
    startElevenLabsUpstream(),
  ]);
  sims = { openai, deepgram, elevenlabs };
  files = createServer((req, res) => {
    if (req.url === '/tone.wav') return void res.writeHead(200, { 'content-type': 'audio/wav' }).end(wav2);
    if (req.url === '/big') return void res.writeHead(200, { 'content-type': 'audio/wav' }).end(toneWav(13));
    res.writeHead(404).end('not found');
  });
  await new Promise<void>((resolve) => files.listen(0, '127.0.0.1', resolve));
  filesUrl = `http://127.0.0.1:${(files.address() as AddressInfo).port}`;
  gateway = await startTestGateway(
    {
      OPENAI_API_KEY: 'sk-upstream-openai',
      OPENAI_BASE_URL: `${openai.url}/v1`,
      GROQ_API_KEY: 'gsk-upstream',
      GROQ_BASE_URL: `${openai.url}/openai/v1`,
      DEEPGRAM_API_KEY: 'dg-upstream',
      DEEPGRAM_BASE_URL: deepgram.url,
      ELEVENLABS_API_KEY: 'xi-upstream',
      ELEVENLABS_BASE_URL: elevenlabs.url,
      GATEWAY_ALLOW_PRIVATE_URLS: 'true',
      GATEWAY_AUDIO_MAX_BYTES: String(MAX_BYTES),
      GATEWAY_UPSTREAM_TIMEOUT_MS: '1500',
      GATEWAY_MAX_RETRY_WAIT_MS: '2000',
    },
    { workerIntervalsMs: { jobs: 30 } },
  );
  const account = await json(await gateway.admin('/accounts', { name: 'audio' }));
  await gateway.admin(`/accounts/${account.account_id}/top-ups`, { cents: 10_000, reference: 'funding' });
  key = account.key;
  client = new OpenAI({ apiKey: key, baseURL: `${gateway.url}/v1`, maxRetries: 0 });
});

afterAll(async () => {
  await gateway?.close();
  await Promise.all(Object.values(sims ?? {}).map((sim) => sim.close()));
  await new Promise((resolve) => files?.close(resolve));
});

const auth = () => ({ authorization: `Bearer ${key}` });

function upload(
  fields: Record<string, string>,
  file?: { bytes: Buffer; name: string; type?: string },
): FormData {
  const form = new FormData();
  if (file) form.append('file', new Blob([file.bytes], { type: file.type ?? 'audio/wav' }), file.name);
  for (const [name, value] of Object.entries(fields)) form.append(name, value);
  return form;
}

const postForm = (path: string, form: FormData, headers: Record<string, string> = {}) =>
  fetch(`${gateway.url}/v1${path}`, { method: 'POST', headers: { ...auth(), ...headers }, body: form });

const postJson = (path: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${gateway.url}/v1${path}`, {
    method: 'POST',
    headers: { ...auth(), 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });

async function usageOf(tag: string): Promise<Json> {
  const report = await eventually(
    async () => json(await fetch(`${gateway.url}/v1/usage/by-tag`, { headers: auth() })),
    (r) => r.data.some((row: Json) => row.tag === tag),
    3000,
  );
  return report.data.find((row: Json) => row.tag === tag);
}

const holdsOf = (requestId: unknown) => holdsOfRequest(gateway.runtime.database.pool, requestId);

/** The charge of `seconds` of audio at a per-minute price in dollars, as the gateway bills it. */
const secondsLine = (seconds: number, perMinute: string): PriceLine => ({
  item: 'audio_seconds',
  quantity: seconds,
  unitPriceNanosPerMillion: ceilDiv(dollarsPerMillion(perMinute) * 1_000_000n, 60n),
});
const charactersLine = (characters: number, perCharacter: string): PriceLine => ({
  item: 'characters',
  quantity: characters,
  unitPriceNanosPerMillion: dollarsPerMillion(perCharacter) * 1_000_000n,
});

async function expectError(response: Response, status: number, message: RegExp): Promise<void> {
  const body: Json = await json(response);
  expect({ status: response.status, message: body.error?.message }).toEqual({
    status,
    message: expect.stringMatching(message),
  });
  expect(body.error.code).toBe(status);
}

describe('POST /v1/audio/transcriptions', () => {
  it('transcribes an uploaded WAV with whisper-1 through the openai SDK, billed the seconds OpenAI measured', async () => {
    const tag = freshTag('stt-whisper');
    const { data, response } = await client.audio.transcriptions
      .create(
        { file: await toFile(wav, 'tone.wav', { type: 'audio/wav' }), model: 'openai/whisper-1' },
        { headers: { 'x-gw-tag': tag } },
      )
      .withResponse();
    expect(data).toEqual({ text: simText(2.5), usage: { type: 'duration', seconds: 2.5 } });
    expect(response.headers.get('x-model')).toBe('openai/whisper-1');
    // The file went upstream whole, as a multipart part with its name; verbose_json is asked for its duration.
    expect(sims.openai.requests.at(-1)).toMatchObject({
      path: '/v1/audio/transcriptions',
      headers: { authorization: 'Bearer sk-upstream-openai' },
      body: {
        fields: { model: ['whisper-1'], response_format: ['verbose_json'] },
        files: { file: { filename: 'tone.wav', bytes: wav.length } },
      },
    });
    const cents = centsFor([secondsLine(3, '0.006')]);
    expect(Number(response.headers.get('x-cost-cents'))).toBe(cents);
    const row = await usageOf(tag);
    expect(row).toMatchObject({ requests: 1, units: 3 });
    expect(row.cost_cents).toBeCloseTo(cents, 7);
  });

  it('answers verbose_json with segments and words, and srt and vtt rendered from the segments', async () => {
    const verbose = await client.audio.transcriptions.create({
      file: await toFile(wav, 'tone.wav'),
      model: 'openai/whisper-1',
      response_format: 'verbose_json',
      timestamp_granularities: ['word'],
      language: 'en',
    });
    expect(verbose).toMatchObject({
      task: 'transcribe',
      language: 'en',
      duration: 2.5,
      text: simText(2.5),
      usage: { type: 'duration', seconds: 2.5 },
    });
    expect(verbose.segments?.map((s) => [s.start, s.end])).toEqual([
      [0, 1.25],
      [1.25, 2.5],
    ]);
    expect(verbose.segments?.[0]).toMatchObject({ id: 0, seek: 0, avg_logprob: -0.25, no_speech_prob: 0.01 });
    expect(verbose.words?.[0]).toEqual({ word: 'Hello', start: 0, end: expect.any(Number) });
    expect(sims.openai.requests.at(-1)?.body).toMatchObject({
      fields: { language: ['en'], 'timestamp_granularities[]': ['segment', 'word'] },
    });

    const srt = await postForm(
      '/audio/transcriptions',
      upload({ model: 'openai/whisper-1', response_format: 'srt' }, { bytes: wav, name: 'a.wav' }),
    );
    expect(srt.status).toBe(200);
    expect(await srt.text()).toBe(
      `1\n00:00:00,000 --> 00:00:01,250\n${simSegments(2.5)[0]?.text}\n\n2\n00:00:01,250 --> 00:00:02,500\n${simSegments(2.5)[1]?.text}\n\n`,
    );
    const vtt = await postForm(
      '/audio/transcriptions',
      upload({ model: 'openai/whisper-1', response_format: 'vtt' }, { bytes: wav, name: 'a.wav' }),
    );
    expect(vtt.headers.get('content-type')).toMatch(/^text\/vtt/);
    expect(await vtt.text()).toMatch(
      /^WEBVTT\n\n00:00:00\.000 --> 00:00:01\.250\nHello from the simulator\.\n\n/,
    );
    const text = await postForm(
      '/audio/transcriptions',
      upload({ model: 'openai/whisper-1', response_format: 'text' }, { bytes: wav, name: 'a.wav' }),
    );
    expect(text.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(await text.text()).toBe(`${simText(2.5)}\n`);
  });

  it('bills a gpt-4o transcriber, which reports tokens not seconds, on the WAV header duration, marked estimated', async () => {
    const tag = freshTag('stt-4o');
    const response = await postForm(
      '/audio/transcriptions',
      upload({ model: 'openai/gpt-4o-mini-transcribe' }, { bytes: wav, name: 'tone.wav' }),
      { 'x-gw-tag': tag },
    );
    expect(response.status).toBe(200);
    expect(await json(response)).toEqual({
      text: simText(2.5),
      usage: { type: 'duration', seconds: 2.5, estimated: true },
    });
    expect(sims.openai.requests.at(-1)?.body).toMatchObject({ fields: { response_format: ['json'] } });
    const cents = centsFor([secondsLine(3, '0.003')]);
    expect(Number(response.headers.get('x-cost-cents'))).toBe(cents);
    expect((await usageOf(tag)).cost_cents).toBeCloseTo(cents, 7);

    const srt = await postForm(
      '/audio/transcriptions',
      upload({ model: 'openai/gpt-4o-transcribe', response_format: 'srt' }, { bytes: wav, name: 'tone.wav' }),
    );
    await expectError(srt, 400, /^'response_format': openai\/gpt-4o-transcribe answers json or text only/);
  });

  it('bills Groq at least 10 seconds a request', async () => {
    const response = await postForm(
      '/audio/transcriptions',
      upload({ model: 'groq/whisper-large-v3-turbo' }, { bytes: wav, name: 'tone.wav' }),
    );
    expect(response.status).toBe(200);
    expect(sims.openai.requests.at(-1)?.path).toBe('/openai/v1/audio/transcriptions');
    expect(Number(response.headers.get('x-cost-cents'))).toBe(centsFor([secondsLine(10, '0.000666667')]));
  });

  it('fetches audio_url and transcribes it with Deepgram, mapped to verbose_json and billed metadata.duration', async () => {
    const tag = freshTag('stt-deepgram');
    const response = await postJson(
      '/audio/transcriptions',
      {
        model: 'deepgram/nova-3',
        audio_url: `${filesUrl}/tone.wav`,
        response_format: 'verbose_json',
        timestamp_granularities: ['word'],
      },
      { 'x-gw-tag': tag },
    );
    expect(response.status).toBe(200);
    const body: Json = await json(response);
    expect(body).toMatchObject({
      task: 'transcribe',
      language: 'en',
      duration: 2,
      text: simText(2),
      usage: { type: 'duration', seconds: 2 },
    });
    expect(body.segments).toEqual(simSegments(2).map((s, id) => ({ id, ...s })));
    expect(body.words[0]).toEqual({ word: 'Hello', start: 0, end: expect.any(Number) });
    const sent = sims.deepgram.requests.at(-1);
    expect(sent).toMatchObject({
      path: '/v1/listen',
      query: { model: 'nova-3', punctuate: 'true', utterances: 'true', detect_language: 'true' },
      headers: {
        authorization: 'Token dg-upstream',
        'content-type': 'audio/wav',
        'content-length': String(wav2.length),
      },
      body: { bytes: wav2.length },
    });
    const cents = centsFor([secondsLine(2, '0.0043')]);
    expect(Number(response.headers.get('x-cost-cents'))).toBe(cents);
    expect(await usageOf(tag)).toMatchObject({ requests: 1, units: 2 });
  });

  it("passes Deepgram's refusal on as a 400 with its message, and releases the hold", async () => {
    const requestId = `dg-bad-${Date.now()}`;
    const response = await postForm(
      '/audio/transcriptions',
      upload(
        { model: 'deepgram/nova-2', language: 'en' },
        { bytes: Buffer.from('not audio at all'), name: 'x.wav' },
      ),
      { 'x-request-id': requestId },
    );
    await expectError(
      response,
      400,
      /deepgram\/nova-2: Bad Request: failed to process audio: corrupt or unsupported data/,
    );
    expect(sims.deepgram.requests.at(-1)?.query).toMatchObject({ model: 'nova-2', language: 'en' });
    expect(await holdsOf(response.headers.get('x-gw-request-id'))).toEqual(['failed']);
  });

  it('refuses bad requests naming the field', async () => {
    const model = 'openai/whisper-1';
    const file = { bytes: wav, name: 'tone.wav' };
    await expectError(await postForm('/audio/transcriptions', upload({ model })), 400, /^'file': required/);
    await expectError(await postForm('/audio/transcriptions', upload({}, file)), 400, /^'model': required/);
    await expectError(
      await postForm('/audio/transcriptions', upload({ model, temperature: 'hot' }, file)),
      400,
      /^'temperature': not a number/,
    );
    await expectError(
      await postForm('/audio/transcriptions', upload({ model, temperature: '' }, file)),
      400,
      /^'temperature': not a number/,
    );
    await expectError(
      await postForm('/audio/transcriptions', upload({ model, temperature: '1.5' }, file)),
      400,
      /^'temperature': Too big/,
    );
    await expectError(
      await postForm('/audio/transcriptions', upload({ model, response_format: 'xml' }, file)),
      400,
      /^'response_format': /,
    );
    await expectError(
      await postJson('/audio/transcriptions', { model: 7, audio_url: `${filesUrl}/tone.wav` }),
      400,
      /^'model': /,
    );
    await expectError(await postJson('/audio/transcriptions', { model }), 400, /^'audio_url': required/);
    await expectError(
      await postJson('/audio/transcriptions', { model, audio_url: 'ftp://x/y.wav' }),
      400,
      /^'audio_url': /,
    );
    await expectError(
      await postForm('/audio/transcriptions', upload({ model }, { bytes: toneWav(13), name: 'long.wav' })),
      413,
      /^'file': larger than the limit of 400000 bytes/,
    );
    await expectError(
      await postJson('/audio/transcriptions', { model, audio_url: `${filesUrl}/big` }),
      413,
      /^'audio_url': larger than/,
    );
    await expectError(
      await postJson('/audio/transcriptions', { model, audio_url: `${filesUrl}/missing.wav` }),
      400,
      /^'audio_url': fetching the URL answered HTTP 404/,
    );
    await expectError(
      await postJson('/audio/transcriptions', { model, audio_url: 'http://127.0.0.1:1/a.wav' }),
      400,
      /^'audio_url': could not fetch the URL/,
    );
    await expectError(
      await postForm('/audio/transcriptions', upload({ model: 'openai/tts-1' }, file)),
      400,
      /^'model': openai\/tts-1 is an audio-tts model, not an audio-stt model; call it with POST \/v1\/audio\/speech/,
    );
    await expectError(
      await postForm('/audio/transcriptions', upload({ model: 'openai/gpt-4o-mini' }, file)),
      400,
      /^'model': openai\/gpt-4o-mini is a text model, not an audio-stt model/,
    );
    await expectError(
      await postForm('/audio/transcriptions', upload({ model: 'nobody/nothing' }, file)),
      404,
      /does not exist/,
    );
    await expectError(
      await postForm(
        '/audio/transcriptions',
        upload({ model }, { bytes: Buffer.alloc(0), name: 'empty.wav' }),
      ),
      400,
      /^'file': the audio is empty/,
    );
  });

  it('runs an async transcription as a job: 202, then result.transcript with text and segments, billed per second', async () => {
    const tag = `async-${Date.now()}`;
    const accepted = await postJson(
      '/audio/transcriptions',
      { model: 'deepgram/nova-3', audio_url: `${filesUrl}/tone.wav`, async: true },
      { 'x-gw-tag': tag },
    );
    expect(accepted.status).toBe(202);
    const body = await json(accepted);
    expect(body).toEqual({ id: expect.stringMatching(/^job_/), status: 'queued', object: 'job' });
    const job = await eventually(
      async () => json(await fetch(`${gateway.url}/v1/jobs/${body.id}`, { headers: auth() })),
      (j) => j.status === 'completed' || j.status === 'failed',
      15_000,
    );
    expect(job).toMatchObject({
      status: 'completed',
      modality: 'transcription',
      model: 'deepgram/nova-3',
      attempts: 1,
    });
    expect(job.result.transcript.text.toLowerCase()).toBe(simText(2).toLowerCase());
    expect(job.result.transcript.segments.length).toBeGreaterThan(0);
    expect(job.result_url).toBeNull();
    expect((await usageOf(tag)).cost_cents).toBe(
      centsFor([
        {
          item: 'audio_seconds',
          quantity: 2,
          unitPriceNanosPerMillion: ceilDiv(4_300_000n * 1_000_000n, 60n),
        },
      ]),
    );
  });

  it('accepts an uploaded file with a webhook_url as a job, and refuses async with a model that has no async capability', async () => {
    const accepted = await postForm(
      '/audio/transcriptions',
      upload(
        { model: 'deepgram/nova-2', webhook_url: 'https://example.com/hook' },
        { bytes: wav, name: 'a.wav' },
      ),
    );
    expect(accepted.status).toBe(202);
    const body = await json(accepted);
    const job = await eventually(
      async () => json(await fetch(`${gateway.url}/v1/jobs/${body.id}`, { headers: auth() })),
      (j) => j.status === 'completed' || j.status === 'failed',
      15_000,
    );
    expect(job).toMatchObject({ status: 'completed', webhook_url: 'https://example.com/hook' });
    expect(job.result.transcript.text.toLowerCase()).toBe(simText(2.5).toLowerCase());
    await expectError(
      await postJson('/audio/transcriptions', {
        model: 'openai/whisper-1',
        audio_url: `${filesUrl}/tone.wav`,
        async: true,
      }),
      400,
      /does not transcribe asynchronously/,
    );
  });

  it('refuses a private audio_url when GATEWAY_ALLOW_PRIVATE_URLS is not set', async () => {
    const strict = await startTestGateway({
      OPENAI_API_KEY: 'sk-upstream',
      OPENAI_BASE_URL: `${sims.openai.url}/v1`,
    });
    try {
      const account = await json(await strict.admin('/accounts', { name: 'strict' }));
      await strict.admin(`/accounts/${account.account_id}/top-ups`, { cents: 100, reference: 'funding' });
      const response = await fetch(`${strict.url}/v1/audio/transcriptions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${account.key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'openai/whisper-1', audio_url: `${filesUrl}/tone.wav` }),
      });
      await expectError(response, 400, /^'audio_url': .*(private|loopback|not allowed|refused)/i);
    } finally {
      await strict.close();
    }
  });
});

describe('POST /v1/audio/speech', () => {
  const input = 'The quick brown fox jumps over the lazy dog.';

  it('streams tts-1 audio through the openai SDK, billed per character before the audio flows', async () => {
    const tag = freshTag('tts');
    const { data, response } = await client.audio.speech
      .create({ model: 'openai/tts-1', input, voice: 'alloy' }, { headers: { 'x-gw-tag': tag } })
      .withResponse();
    expect(response.headers.get('content-type')).toBe('audio/mpeg');
    expect(Buffer.from(await data.arrayBuffer())).toEqual(speechBytes('mp3', input));
    expect(sims.openai.requests.at(-1)).toMatchObject({
      path: '/v1/audio/speech',
      body: { model: 'tts-1', input, voice: 'alloy', response_format: 'mp3' },
    });
    const cents = centsFor([charactersLine(input.length, '0.000015')]);
    expect(Number(response.headers.get('x-cost-cents'))).toBe(cents);
    const row = await usageOf(tag);
    expect(row).toMatchObject({ requests: 1, units: input.length });
    expect(row.cost_cents).toBeCloseTo(cents, 7);
  });

  it('passes chunks on as the provider sends them, not after the last one', async () => {
    sims.openai.script({ kind: 'ok', chunkDelayMs: 150 });
    const started = performance.now();
    const response = await postJson('/audio/speech', {
      model: 'openai/tts-1-hd',
      input,
      voice: 'nova',
      response_format: 'opus',
    });
    const headersAt = performance.now() - started;
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('audio/ogg');
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    const first = await reader.read();
    const firstAt = performance.now() - started;
    const chunks = [Buffer.from(first.value ?? [])];
    for (let next = await reader.read(); !next.done; next = await reader.read())
      chunks.push(Buffer.from(next.value));
    const endAt = performance.now() - started;
    expect(Buffer.concat(chunks)).toEqual(speechBytes('opus', input));
    // Five chunks 150 ms apart: the first arrives well before the last is sent.
    expect(endAt - Math.max(headersAt, firstAt)).toBeGreaterThan(400);
  });

  it('keeps the charge when the client leaves mid-stream', async () => {
    const tag = freshTag('tts-gone');
    const requestId = `tts-gone-${Date.now()}`;
    sims.openai.script({ kind: 'ok', chunkDelayMs: 300 });
    const response = await postJson(
      '/audio/speech',
      { model: 'openai/tts-1', input, voice: 'alloy' },
      { 'x-gw-tag': tag, 'x-request-id': requestId },
    );
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    await reader.read();
    await reader.cancel();
    expect(await holdsOf(response.headers.get('x-gw-request-id'))).toEqual(['settled']);
    expect((await usageOf(tag)).cost_cents).toBeCloseTo(
      centsFor([charactersLine(input.length, '0.000015')]),
      7,
    );
  });

  it('speaks with ElevenLabs in its own wire format, billed at its per-character price', async () => {
    const tag = freshTag('tts-eleven');
    const response = await postJson(
      '/audio/speech',
      {
        model: 'elevenlabs/eleven_flash_v2_5',
        input,
        voice: '21m00Tcm4TlvDq8ikWAM',
        response_format: 'opus',
        speed: 1.1,
      },
      { 'x-gw-tag': tag },
    );
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('audio/ogg');
    expect(Buffer.from(await response.arrayBuffer())).toEqual(speechBytes('opus_48000_128', input));
    expect(sims.elevenlabs.requests.at(-1)).toMatchObject({
      path: '/v1/text-to-speech/21m00Tcm4TlvDq8ikWAM/stream',
      query: { output_format: 'opus_48000_128' },
      headers: { 'xi-api-key': 'xi-upstream' },
      body: { text: input, model_id: 'eleven_flash_v2_5', voice_settings: { speed: 1.1 } },
    });
    const cents = centsFor([charactersLine(input.length, '0.00005')]);
    expect(Number(response.headers.get('x-cost-cents'))).toBe(cents);
    expect((await usageOf(tag)).cost_cents).toBeCloseTo(cents, 7);

    const defaultVoice = await postJson('/audio/speech', {
      model: 'elevenlabs/eleven_multilingual_v2',
      input: 'Hi',
    });
    expect(defaultVoice.status).toBe(200);
    expect(sims.elevenlabs.requests.at(-1)).toMatchObject({
      path: '/v1/text-to-speech/JBFqnCBsd6RMkjVDRZzb/stream',
      query: { output_format: 'mp3_44100_128' },
    });
  });

  it("passes ElevenLabs' refusals on with their message, releasing the hold (failed)", async () => {
    const requestId = `tts-eleven-bad-${Date.now()}`;
    const response = await postJson(
      '/audio/speech',
      { model: 'elevenlabs/eleven_v3', input, voice: 'no-such-voice' },
      { 'x-request-id': requestId },
    );
    await expectError(
      response,
      400,
      /voice_not_found: A voice with the voice_id no-such-voice was not found/,
    );
    expect(await holdsOf(response.headers.get('x-gw-request-id'))).toEqual(['failed']);
    sims.elevenlabs.script({ kind: 'error', status: 401 });
    await expectError(
      await postJson('/audio/speech', { model: 'elevenlabs/eleven_v3', input }),
      400,
      /invalid_api_key: Invalid API key/,
    );
    sims.elevenlabs.script({
      kind: 'error',
      status: 422,
      body: { detail: [{ type: 'missing', loc: ['body', 'text'], msg: 'Field required' }] },
    });
    await expectError(
      await postJson('/audio/speech', { model: 'elevenlabs/eleven_v3', input }),
      400,
      /body\.text: Field required/,
    );
    sims.elevenlabs.script({ kind: 'error', status: 500 });
    await expectError(
      await postJson('/audio/speech', { model: 'elevenlabs/eleven_v3', input }),
      502,
      /internal_error/,
    );
  });

  it('refuses bad requests naming the field', async () => {
    await expectError(await postJson('/audio/speech', { model: 'openai/tts-1' }), 400, /'input'/);
    await expectError(await postJson('/audio/speech', { input }), 400, /'model'/);
    await expectError(
      await postJson('/audio/speech', { model: 'openai/tts-1', input: 'x'.repeat(4097) }),
      400,
      /'input'/,
    );
    await expectError(
      await postJson('/audio/speech', { model: 'openai/tts-1', input, response_format: 'ogg' }),
      400,
      /'response_format'/,
    );
    await expectError(
      await postJson('/audio/speech', { model: 'elevenlabs/eleven_v3', input, response_format: 'flac' }),
      400,
      /^'response_format': elevenlabs\/eleven_v3 produces mp3, opus, pcm, not flac/,
    );
    await expectError(
      await postJson('/audio/speech', { model: 'elevenlabs/eleven_v3', input, speed: 2 }),
      400,
      /^'speed': elevenlabs\/eleven_v3 takes 0.7 to 1.2/,
    );
    await expectError(
      await postJson('/audio/speech', { model: 'openai/whisper-1', input }),
      400,
      /^'model': openai\/whisper-1 is an audio-stt model, not an audio-tts model; call it with POST \/v1\/audio\/transcriptions/,
    );
  });
});

describe('GET /v1/models for audio', () => {
  it('lists speech-to-text models with per-minute prices, and the two realtime ones with realtime and async', async () => {
    const list: Json = await json(
      await fetch(`${gateway.url}/v1/models?modality=audio-stt&all=true`, { headers: auth() }),
    );
    const byId = new Map<string, Json>(list.data.map((m: Json) => [m.id, m]));
    expect(byId.get('openai/whisper-1')).toMatchObject({
      available: true,
      pricing: { per_unit_usd: { audio_minute: 0.006 } },
    });
    expect(byId.get('openai/gpt-4o-transcribe')).toMatchObject({ available: true });
    for (const id of ['deepgram/nova-3', 'deepgram/nova-2']) {
      expect(byId.get(id)).toMatchObject({
        available: true,
        capabilities: ['speech-to-text', 'realtime-transcription', 'async'],
      });
    }
    expect(byId.get('deepgram/nova-3')?.pricing.per_unit_usd).toEqual({
      audio_minute: 0.0043,
      audio_minute_realtime: 0.0077,
    });
    // Reached over a WebSocket, not this endpoint.
    expect(byId.get('openai/gpt-realtime')?.available).toBe(false);
  });

  it('lists text-to-speech models with per-character prices', async () => {
    const list: Json = await json(
      await fetch(`${gateway.url}/v1/models?modality=audio-tts&all=true`, { headers: auth() }),
    );
    const byId = new Map<string, Json>(list.data.map((m: Json) => [m.id, m]));
    expect(byId.get('openai/tts-1')).toMatchObject({
      available: true,
      pricing: { per_unit_usd: { character: 0.000015 } },
    });
    expect(byId.get('elevenlabs/eleven_multilingual_v2')).toMatchObject({
      available: true,
      capabilities: ['text-to-speech'],
      pricing: { per_unit_usd: { character: 0.0001 } },
    });
    expect(byId.get('google/gemini-2.5-flash-tts')?.available).toBe(false);
  });
});

it('generates WAV files the simulators can measure', () => {
  expect(wav.length).toBe(80_044);
  expect(playedSeconds(wav)).toBe(2.5);
});
