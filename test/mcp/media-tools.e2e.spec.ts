import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, startTestGateway, type TestGateway } from '../support/gateway.ts';
import { type Json, json } from '../support/json.ts';
import { speechBytes, toneWav } from '../upstreams/audio-model.ts';
import { startDeepgramUpstream } from '../upstreams/deepgram.ts';
import { startOpenAiAudioUpstream } from '../upstreams/openai-audio.ts';
import { startOpenAiImagesUpstream } from '../upstreams/openai-images.ts';
import type { Upstream } from '../upstreams/types.ts';

// The tools whose answers are bytes: images and speech come back as signed media URLs, fetchable with no key.

let audio: Upstream;
let images: Upstream;
let deepgram: Upstream;
let files: Server;
let filesUrl: string;
const gateways: TestGateway[] = [];
const clients: Client[] = [];

async function agentOn(
  upstream: Upstream,
  env: Record<string, string> = {},
): Promise<{ gateway: TestGateway; client: Client; key: string }> {
  const gateway = await startTestGateway({
    OPENAI_API_KEY: 'sk-upstream',
    OPENAI_BASE_URL: `${upstream.url}/v1`,
    GATEWAY_ALLOW_PRIVATE_URLS: 'true',
    ...env,
  });
  gateways.push(gateway);
  const account = await json(await gateway.admin('/accounts', { name: 'media agent' }));
  await gateway.admin(`/accounts/${account.account_id}/top-ups`, { cents: 10_000, reference: 'media' });
  const client = new Client(
    { name: 'e2e', version: '1.0.0' },
    { versionNegotiation: { mode: { pin: '2026-07-28' } } },
  );
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${gateway.url}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${account.key}` } },
    }),
  );
  clients.push(client);
  return { gateway, client, key: account.key };
}

async function call(client: Client, name: string, args: Record<string, unknown>): Promise<Json> {
  const result = await client.callTool({ name, arguments: args });
  if (result.isError) throw new Error(`${name}: ${JSON.stringify(result.content)}`);
  return result.structuredContent;
}

beforeAll(async () => {
  [audio, images, deepgram] = await Promise.all([
    startOpenAiAudioUpstream(),
    startOpenAiImagesUpstream(),
    startDeepgramUpstream(),
  ]);
  const wav = toneWav(2);
  files = createServer((req, res) => {
    if (req.url === '/tone.wav') return void res.writeHead(200, { 'content-type': 'audio/wav' }).end(wav);
    res.writeHead(404).end('not found');
  });
  await new Promise<void>((resolve) => files.listen(0, '127.0.0.1', resolve));
  filesUrl = `http://127.0.0.1:${(files.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await Promise.all(clients.map((c) => c.close().catch(() => {})));
  await Promise.all(gateways.map((g) => g.close()));
  await Promise.all([audio?.close(), images?.close(), deepgram?.close()]);
  await new Promise((resolve) => files?.close(resolve));
});

describe('MCP tools that produce or read media', () => {
  it('speak returns a signed URL to the audio, and transcribe reads an audio URL', async () => {
    const { client, gateway, key } = await agentOn(audio, {
      DEEPGRAM_API_KEY: 'dg-upstream',
      DEEPGRAM_BASE_URL: deepgram.url,
    });
    const input = 'The quick brown fox jumps over the lazy dog.';
    const spoken = await call(client, 'speak', { model: 'openai/tts-1', input, voice: 'alloy' });
    expect(spoken).toMatchObject({
      model: 'openai/tts-1',
      content_type: 'audio/mpeg',
      url: expect.any(String),
    });
    expect(spoken.cost_cents).toBeGreaterThan(0);
    const fetched = await fetch(spoken.url);
    expect(fetched.status).toBe(200);
    expect(fetched.headers.get('content-type')).toBe('audio/mpeg');
    expect(Buffer.from(await fetched.arrayBuffer())).toEqual(speechBytes('mp3', input));
    // The signature is the key: without it the media host refuses.
    expect(
      (await fetch(spoken.url.replace(/signature=[0-9a-f]+/, 'signature=0'.padEnd(74, '0')))).status,
    ).toBe(403);

    const heard = await call(client, 'transcribe', {
      model: 'openai/whisper-1',
      audio_url: `${filesUrl}/tone.wav`,
    });
    expect(heard.text.length).toBeGreaterThan(0);
    expect(heard).toMatchObject({
      model: 'openai/whisper-1',
      request_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
    });
    expect(heard.cost_cents).toBeGreaterThan(0);

    // An asynchronous transcription is a job: list_jobs finds it, get_job follows it.
    const accepted = await fetch(`${gateway.url}/v1/audio/transcriptions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'deepgram/nova-3', audio_url: `${filesUrl}/tone.wav`, async: true }),
    });
    expect(accepted.status).toBe(202);
    const job = await json(accepted);
    const listed = await eventually(
      () => call(client, 'list_jobs', {}),
      (page) => page.data.some((j: Json) => j.id === job.id),
      3000,
    );
    expect(listed.data.find((j: Json) => j.id === job.id)).toMatchObject({
      object: 'job',
      model: 'deepgram/nova-3',
    });
    expect(await call(client, 'get_job', { id: job.id })).toMatchObject({ id: job.id, object: 'job' });
    const none = await call(client, 'list_jobs', { status: 'processing', limit: 1 });
    expect(none.data.every((j: Json) => j.status === 'processing')).toBe(true);
  });

  it('generate_image returns signed URLs to the images', async () => {
    const { client } = await agentOn(images);
    const made = await call(client, 'generate_image', {
      model: 'openai/dall-e-3',
      prompt: 'a lighthouse',
      n: 1,
    });
    expect(made.images).toHaveLength(1);
    expect(made.cost_cents).toBeGreaterThan(0);
    const fetched = await fetch(made.images[0].url);
    expect(fetched.status).toBe(200);
    expect(fetched.headers.get('content-type')).toBe('image/png');
  });
});
