import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import type { IncomingHttpHeaders } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { nanosToCents, priceCharge } from '../../src/contracts/money.ts';
import { audioLine, costOfSeconds, perMillionSeconds } from '../../src/modalities/realtime/pricing.ts';
import { eventually, startTestGateway, type TestGateway } from '../support/gateway.ts';
import { holdsOf as holdsOfRequest } from '../support/holds.ts';
import { type Json, json } from '../support/json.ts';
import {
  COMPRESSED_BYTES_PER_SECOND,
  type DeepgramLiveUpstream,
  startDeepgramLiveUpstream,
} from '../upstreams/deepgram-live.ts';
import { freshTag } from './support.ts';

/** Nova-3's streaming rate, $0.0077 a minute (its pre-recorded rate is $0.0043). */
const UNIT_PRICE = perMillionSeconds(7_700_000n);
const RATE = 16_000;
const BYTES_PER_MS = (RATE * 2) / 1000;
/** 100 ms of 16 kHz mono 16-bit audio. */
const FRAME = 3200;

let sim: DeepgramLiveUpstream;
let gateway: TestGateway;
let key: string;
let dir: string;
let wav: Buffer;

/** A 440 Hz tone as a 16-bit PCM WAV file (no speech synthesiser is installed here). */
function toneWav(seconds: number): Buffer {
  const samples = RATE * seconds;
  const data = Buffer.alloc(samples * 2);
  for (let i = 0; i < samples; i++)
    data.writeInt16LE(Math.round(8000 * Math.sin((2 * Math.PI * 440 * i) / RATE)), i * 2);
  const header = Buffer.alloc(44);
  header.write('RIFF', 0);
  header.writeUInt32LE(36 + data.length, 4);
  header.write('WAVEfmt ', 8);
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20);
  header.writeUInt16LE(1, 22);
  header.writeUInt32LE(RATE, 24);
  header.writeUInt32LE(RATE * 2, 28);
  header.writeUInt16LE(2, 32);
  header.writeUInt16LE(16, 34);
  header.write('data', 36);
  header.writeUInt32LE(data.length, 40);
  return Buffer.concat([header, data]);
}

/** The samples of a WAV file: the bytes of its `data` chunk. */
function pcmOf(file: Buffer): Buffer {
  let offset = 12;
  while (offset < file.length) {
    const size = file.readUInt32LE(offset + 4);
    if (file.toString('ascii', offset, offset + 4) === 'data')
      return file.subarray(offset + 8, offset + 8 + size);
    offset += 8 + size;
  }
  throw new Error('no data chunk');
}

interface Stream {
  messages: Json[];
  code: number;
  headers: IncomingHttpHeaders;
}

interface Refused {
  status: number;
  headers: IncomingHttpHeaders;
  body: Json;
}

const realtimeUrl = (query: Record<string, string>) =>
  `${gateway.url.replace(/^http/, 'ws')}/v1/realtime?${new URLSearchParams(query)}`;

/** Streams the audio in frames, then CloseStream; resolves with every message and the close code. */
function stream(
  query: Record<string, string>,
  audio: Buffer,
  options: { headers?: Record<string, string>; frame?: number; closeStream?: boolean } = {},
): Promise<Stream | Refused> {
  const frame = options.frame ?? FRAME;
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(realtimeUrl(query), { headers: options.headers });
    const messages: Json[] = [];
    let headers: IncomingHttpHeaders = {};
    socket.on('upgrade', (response) => {
      headers = response.headers;
    });
    socket.on('unexpected-response', (_request, response) => {
      let text = '';
      response.on('data', (chunk) => {
        text += chunk;
      });
      response.on('end', () =>
        resolve({ status: response.statusCode ?? 0, headers: response.headers, body: JSON.parse(text) }),
      );
    });
    socket.on('error', reject);
    socket.on('open', () => {
      for (let at = 0; at < audio.length; at += frame) socket.send(audio.subarray(at, at + frame));
      if (options.closeStream !== false) socket.send(JSON.stringify({ type: 'CloseStream' }));
    });
    socket.on('message', (data) => messages.push(JSON.parse(data.toString())));
    socket.on('close', (code) => resolve({ messages, code, headers }));
  });
}

async function opened(query: Record<string, string>, audio: Buffer, headers?: Record<string, string>) {
  const result = await stream(query, audio, { headers });
  if ('status' in result) throw new Error(`refused: ${result.status} ${JSON.stringify(result.body)}`);
  return result;
}

async function refused(query: Record<string, string>, headers?: Record<string, string>) {
  const result = await stream(query, Buffer.alloc(0), { headers });
  if (!('status' in result)) throw new Error('the handshake was accepted');
  return result;
}

const authorization = () => ({ authorization: `Bearer ${key}` });

/** The usage report's row for a tag once it counts `requests` settled slices (the projection lags the ledger). */
async function usageOf(tag: string, requests = 1): Promise<Json> {
  const row = (report: Json) => report.data.find((r: Json) => r.tag === tag);
  const report = await eventually(
    async () => json(await fetch(`${gateway.url}/v1/usage/by-tag`, { headers: authorization() })),
    (r) => (row(r)?.requests ?? 0) >= requests,
    3000,
  );
  return row(report);
}

const holdsOf = (requestId: unknown) => holdsOfRequest(gateway.runtime.database.pool, requestId);

/** What the slices of a stream are charged, in cents: a minute per slice, the rest in the last. */
function slicesCents(seconds: number[]): number {
  return nanosToCents(seconds.reduce((sum, slice) => sum + costOfSeconds(slice, UNIT_PRICE), 0n));
}

const pcm16k = { model: 'deepgram/nova-3', encoding: 'linear16', sample_rate: String(RATE) };

beforeAll(async () => {
  sim = await startDeepgramLiveUpstream();
  gateway = await startTestGateway({
    DEEPGRAM_API_KEY: 'upstream-deepgram',
    DEEPGRAM_BASE_URL: sim.url,
    GATEWAY_UPSTREAM_TIMEOUT_MS: '1500',
  });
  const account = await json(await gateway.admin('/accounts', { name: 'realtime' }));
  await gateway.admin(`/accounts/${account.account_id}/top-ups`, { cents: 10_000, reference: 'funding' });
  key = account.key;
  dir = await mkdtemp(join(tmpdir(), 'gw-realtime-'));
  await writeFile(join(dir, 'tone.wav'), toneWav(5));
  wav = await readFile(join(dir, 'tone.wav'));
});
afterAll(async () => {
  await gateway?.close();
  await sim?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('GET /v1/realtime', () => {
  it('relays a WAV file streamed in frames: interim and final Results, Metadata last, a normal close, billed per slice', async () => {
    const tag = freshTag('realtime');
    const audio = pcmOf(wav);
    const result = await opened({ ...pcm16k, interim_results: 'true', api_key: key }, audio, {
      'x-gw-tag': tag,
    });

    expect(result.code).toBe(1000);
    expect(result.headers['x-model']).toBe('deepgram/nova-3');
    expect(result.headers['x-provider']).toBe('deepgram');
    const results = result.messages.filter((m) => m.type === 'Results');
    expect(results.some((m) => m.is_final === false)).toBe(true);
    expect(results.filter((m) => m.is_final === true)).toHaveLength(5);
    for (const m of results) expect(m.channel.alternatives[0].transcript).toMatch(/^audio from /);
    expect(result.messages.at(-1)).toMatchObject({ type: 'Metadata', duration: 5, channels: 1 });
    expect(result.messages.filter((m) => m.type === 'Metadata')).toHaveLength(1);

    const upstream = sim.streams.at(-1);
    expect(upstream?.headers.authorization).toBe('Token upstream-deepgram');
    expect(upstream?.query).toEqual({
      model: 'nova-3',
      encoding: 'linear16',
      sample_rate: '16000',
      interim_results: 'true',
    });
    expect(upstream?.bytes).toBe(audio.length);
    expect(upstream?.controls).toEqual(['{"type":"CloseStream"}']);

    const row = await usageOf(tag);
    expect(row).toMatchObject({ requests: 1, units: 5 });
    expect(row.cost_cents).toBeCloseTo(nanosToCents(priceCharge([audioLine(5, UNIT_PRICE)]).chargedNanos), 7);
    expect(await holdsOf(result.headers['x-request-id'])).toEqual(['settled']);
  });

  it('takes the key in the Authorization header and the tag as a query parameter; a long stream is held and billed a minute at a time', async () => {
    const tag = freshTag('realtime-long');
    const audio = Buffer.alloc(130 * 1000 * BYTES_PER_MS);
    const result = await opened({ ...pcm16k, tag }, audio, authorization());
    expect(result.code).toBe(1000);
    expect(result.messages.at(-1)).toMatchObject({ type: 'Metadata', duration: 130 });
    expect(result.messages.some((m) => m.is_final === false)).toBe(false);
    const row = await usageOf(tag, 3);
    expect(row).toMatchObject({ requests: 3, units: 130 });
    expect(row.cost_cents).toBeCloseTo(slicesCents([60, 60, 10]), 7);
    expect(await holdsOf(result.headers['x-request-id'])).toEqual(['settled', 'settled', 'settled']);
    // One record in the request log for the whole stream, with every slice's charge.
    const logged = await eventually(
      () =>
        fetch(`${gateway.url}/v1/requests/${result.headers['x-request-id']}`, {
          headers: { authorization: `Bearer ${key}` },
        }),
      (response) => response.status === 200,
      3000,
    );
    expect(logged.status).toBe(200);
    const record = await json(logged);
    expect(record).toMatchObject({
      endpoint: '/v1/realtime',
      model: 'deepgram/nova-3',
      stream: true,
      status: 200,
    });
    expect(record.cost_cents).toBeCloseTo(slicesCents([60, 60, 10]), 7);
  });

  it('bills compressed audio by the durations the provider reports', async () => {
    const tag = freshTag('realtime-opus');
    const audio = Buffer.alloc(2 * COMPRESSED_BYTES_PER_SECOND);
    const result = await opened(
      { model: 'deepgram/nova-3', encoding: 'opus', sample_rate: '48000', tag },
      audio,
      authorization(),
    );
    expect(result.code).toBe(1000);
    expect(result.messages.at(-1)).toMatchObject({ type: 'Metadata', duration: 2 });
    const row = await usageOf(tag);
    expect(row).toMatchObject({ requests: 1, units: 2 });
    expect(row.cost_cents).toBeCloseTo(slicesCents([2]), 7);
  });

  it('refuses a large text message as no control message, without parsing it or passing it on', async () => {
    const before = sim.streams.length;
    const socket = new WebSocket(realtimeUrl({ ...pcm16k, api_key: key }));
    const messages: Json[] = [];
    socket.on('message', (data) => messages.push(JSON.parse(data.toString())));
    const closed = new Promise<number>((resolve) => socket.on('close', resolve));
    await new Promise((resolve) => socket.on('open', resolve));
    // A KeepAlive as wide as a 200,000-key object: parsed, it would hold the event loop and reach the provider.
    const wide = `{"type":"KeepAlive",${Array.from({ length: 200_000 }, (_, i) => `"k${i}":0`).join(',')}}`;
    socket.send(wide);
    await eventually(
      async () => messages.some((m) => m.type === 'Error'),
      (seen) => seen,
      10_000,
    );
    // The stream goes on, as after any unknown message.
    socket.send(JSON.stringify({ type: 'CloseStream' }));
    expect(await closed).toBe(1000);
    expect(messages.find((m) => m.type === 'Error')).toMatchObject({
      error: {
        type: 'invalid_request_error',
        message: expect.stringContaining('over the 1024 of a control message'),
      },
    });
    const controls = sim.streams.slice(before).flatMap((s) => s.controls);
    expect(controls.some((m) => m.length > 1024)).toBe(false);
  });

  it('answers a plain GET with 426 in the error shape and an Upgrade header, with or without a key', async () => {
    for (const headers of [{}, authorization()]) {
      const response = await fetch(`${gateway.url}/v1/realtime?model=deepgram/nova-3`, { headers });
      expect(response.status).toBe(426);
      expect(response.headers.get('upgrade')).toBe('websocket');
      const body = await json(response);
      expect(body).toEqual({
        error: {
          message: expect.stringContaining('WebSocket'),
          type: 'invalid_request_error',
          param: null,
          code: 426,
        },
      });
    }
  });

  it('answers an upgrade request on any other path as a plain request', async () => {
    const status = await new Promise<number>((resolve, reject) => {
      const socket = new WebSocket(`${gateway.url.replace(/^http/, 'ws')}/v1/models`, {
        headers: authorization(),
      });
      socket.on('unexpected-response', (_request, response) => {
        response.resume();
        resolve(response.statusCode ?? 0);
      });
      socket.on('open', () => reject(new Error('upgraded')));
      socket.on('error', reject);
    });
    expect(status).toBe(200);
  });

  it('refuses a missing or invalid key with 401 before the upgrade', async () => {
    for (const [query, headers] of [
      [pcm16k, {}],
      [{ ...pcm16k, api_key: 'sk-gw-not-a-real-key' }, {}],
      [pcm16k, { authorization: 'Bearer sk-gw-not-a-real-key' }],
    ] as const) {
      const answer = await refused(query, headers);
      expect(answer.status).toBe(401);
      expect(answer.body.error).toMatchObject({ type: 'authentication_error', code: 401 });
    }
  });

  it.each([
    ['an unknown encoding', { ...pcm16k, encoding: 'wav' }, 400, "'encoding'"],
    [
      'an encoding without a sample rate',
      { model: 'deepgram/nova-3', encoding: 'linear16' },
      400,
      "'sample_rate'",
    ],
    ['a sample rate that is not a number', { ...pcm16k, sample_rate: 'fast' }, 400, "'sample_rate'"],
    [
      'interim_results that is not a boolean',
      { ...pcm16k, interim_results: 'yes' },
      400,
      "'interim_results'",
    ],
    [
      'a model that only transcribes recorded audio',
      { ...pcm16k, model: 'openai/whisper-1' },
      400,
      '/v1/audio/transcriptions',
    ],
    ['a chat model', { ...pcm16k, model: 'openai/gpt-4o' }, 400, '/v1/chat/completions'],
    ['an unknown model', { ...pcm16k, model: 'deepgram/nova-9' }, 404, 'nova-9'],
  ])('refuses %s before the upgrade', async (_, query, status, named) => {
    const answer = await refused({ ...query, api_key: key });
    expect(answer.status).toBe(status);
    expect(answer.body.error.code).toBe(status);
    expect(answer.body.error.message).toContain(named);
  });

  it('answers 502 when the provider refuses the stream, and releases the hold', async () => {
    sim.script({ kind: 'refuse', status: 503, reason: 'Service unavailable' });
    const answer = await refused({ ...pcm16k, api_key: key });
    expect(answer.status).toBe(502);
    expect(answer.body.error).toMatchObject({ type: 'provider_error', code: 502 });
    expect(answer.body.error.message).toContain('503');
    expect(await holdsOf(answer.headers['x-request-id'])).toEqual(['failed']);
  });

  it('closes with an Error and 4502 when the provider breaks the stream, billing only the audio sent', async () => {
    const tag = freshTag('realtime-drop');
    sim.script({ kind: 'drop', afterMs: 2000 });
    const result = await opened({ ...pcm16k, tag }, Buffer.alloc(5000 * BYTES_PER_MS), authorization());
    expect(result.code).toBe(4502);
    const error = result.messages.at(-1);
    expect(error).toMatchObject({ type: 'Error', error: { type: 'provider_error', code: 502 } });
    expect(error.message).toContain('1011');
    const row = await usageOf(tag);
    expect(row.requests).toBe(1);
    expect(row.units).toBeGreaterThanOrEqual(2);
    expect(row.units).toBeLessThanOrEqual(5);
    expect(row.cost_cents).toBeCloseTo(slicesCents([row.units]), 7);
  });

  it('stops a sub-account at its spend cap: an Error, the last results and Metadata, close 4402, billed only the audio sent', async () => {
    const sub = await json(
      await fetch(`${gateway.url}/v1/sub-accounts`, {
        method: 'POST',
        headers: { ...authorization(), 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'listener', spend_cap_cents: 1, default_tag: freshTag('realtime-cap') }),
      }),
    );
    // 1 cent holds a first minute ($0.0080850 with the fee) and about 14 s more; the client sends two minutes.
    const audio = Buffer.alloc(120 * 1000 * BYTES_PER_MS);
    const result = await opened({ ...pcm16k, api_key: sub.key }, audio);

    expect(result.code).toBe(4402);
    const errorAt = result.messages.findIndex((m) => m.type === 'Error');
    expect(result.messages[errorAt]).toMatchObject({ error: { type: 'budget_exceeded', code: 402 } });
    expect(result.messages[errorAt].message).toContain(`Spend cap of sub-account ${sub.id} reached`);
    // The transcript of every second paid for still arrives, then the summary.
    expect(result.messages.at(-1)).toMatchObject({ type: 'Metadata', duration: 74 });
    const lastFinal = result.messages.filter((m) => m.type === 'Results' && m.is_final).at(-1);
    expect(lastFinal.start + lastFinal.duration).toBeCloseTo(74, 6);

    // The provider got the audio the cap allows and no more: a whole minute, then the whole seconds the rest of the
    // cent pays for (14 s: $0.0018865 with the fee; 15 s would cost $0.0020213 and cross the cap).
    const sentMs = (sim.streams.at(-1)?.bytes ?? 0) / BYTES_PER_MS;
    expect(sentMs).toBe(74_000);
    expect(costOfSeconds(60, UNIT_PRICE) + costOfSeconds(14, UNIT_PRICE)).toBeLessThanOrEqual(10_000_000n);
    expect(costOfSeconds(60, UNIT_PRICE) + costOfSeconds(15, UNIT_PRICE)).toBeGreaterThan(10_000_000n);

    const row = await usageOf(sub.default_tag, 2);
    expect(row).toMatchObject({ requests: 2, units: 74 });
    expect(row.cost_cents).toBeCloseTo(slicesCents([60, 14]), 7);
    expect(row.cost_cents).toBeLessThanOrEqual(1);
    expect(await holdsOf(result.headers['x-request-id'])).toEqual(['settled', 'settled']);
  });
});

describe('GET /v1/realtime while the gateway shuts down', () => {
  it('ends an open stream with an Error, the Metadata and close 1001, and does not hold the shutdown up', async () => {
    const closing = await startTestGateway({
      DEEPGRAM_API_KEY: 'upstream-deepgram',
      DEEPGRAM_BASE_URL: sim.url,
    });
    const account = await json(await closing.admin('/accounts', { name: 'realtime-shutdown' }));
    await closing.admin(`/accounts/${account.account_id}/top-ups`, { cents: 100, reference: 'funding' });
    const socket = new WebSocket(
      `${closing.url.replace(/^http/, 'ws')}/v1/realtime?${new URLSearchParams({ ...pcm16k, api_key: account.key })}`,
    );
    const messages: Json[] = [];
    socket.on('message', (data) => messages.push(JSON.parse(data.toString())));
    const closed = new Promise<number>((resolve) => socket.on('close', resolve));
    await new Promise((resolve) => socket.on('open', resolve));
    socket.send(Buffer.alloc(3000 * BYTES_PER_MS));
    await eventually(
      async () => messages.length,
      (n) => n >= 3,
      3000,
    );
    const started = Date.now();
    await closing.close();
    expect(Date.now() - started).toBeLessThan(5000);
    expect(await closed).toBe(1001);
    expect(messages.find((m) => m.type === 'Error')).toMatchObject({
      error: { type: 'api_error', code: 503 },
    });
    expect(messages.at(-1)).toMatchObject({ type: 'Metadata', duration: 3 });
  });
});
