import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PriceLine } from '../../src/contracts/money.ts';
import { eventually, startTestGateway, type TestGateway } from '../support/gateway.ts';
import { holdsOf as holdsOfRequest } from '../support/holds.ts';
import { type Json, json } from '../support/json.ts';
import { png } from '../upstreams/binary-harness.ts';
import { tokens } from '../upstreams/modality-model.ts';
import {
  IMAGE_TOKENS_PER_INPUT,
  imageText,
  type OpenAiImagesUpstream,
  startOpenAiImagesUpstream,
} from '../upstreams/openai-images.ts';
import { stabilityText, startStabilityUpstream } from '../upstreams/stability.ts';
import type { Upstream } from '../upstreams/types.ts';
import { centsFor, freshTag } from './support.ts';

/** A gateway over the OpenAI images and Stability simulators, a funded key, and a host serving source images. */
let gateway: TestGateway;
let openai: OpenAiImagesUpstream;
let stability: Upstream;
let sources: Server;
let sourceUrl: string;
let key: string;
let client: OpenAI;
/** A second gateway without GATEWAY_ALLOW_PRIVATE_URLS: client URLs must reach public addresses. */
let guarded: TestGateway;
let guardedKey: string;

const SOURCE = png('the source image');
const MASK = png('the mask');

beforeAll(async () => {
  [openai, stability] = await Promise.all([startOpenAiImagesUpstream(), startStabilityUpstream()]);
  sources = createServer((req, res) => {
    if (req.url === '/source.png')
      return void res.writeHead(200, { 'content-type': 'image/png' }).end(SOURCE);
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => sources.listen(0, '127.0.0.1', resolve));
  sourceUrl = `http://127.0.0.1:${(sources.address() as AddressInfo).port}`;
  const guarding = startTestGateway({
    OPENAI_API_KEY: 'sk-upstream-openai',
    OPENAI_BASE_URL: `${openai.url}/v1`,
  });
  gateway = await startTestGateway({
    OPENAI_API_KEY: 'sk-upstream-openai',
    OPENAI_BASE_URL: `${openai.url}/v1`,
    STABILITY_API_KEY: 'sk-upstream-stability',
    STABILITY_BASE_URL: stability.url,
    GATEWAY_ALLOW_PRIVATE_URLS: 'true',
    GATEWAY_UPSTREAM_TIMEOUT_MS: '1500',
    GATEWAY_MAX_RETRY_WAIT_MS: '2000',
  });
  const account = await json(await gateway.admin('/accounts', { name: 'images' }));
  await gateway.admin(`/accounts/${account.account_id}/top-ups`, { cents: 10_000, reference: 'funding' });
  key = account.key;
  client = new OpenAI({ apiKey: key, baseURL: `${gateway.url}/v1`, maxRetries: 0 });
  guarded = await guarding;
  guardedKey = (await json(await guarded.admin('/accounts', { name: 'guarded' }))).key;
});

afterAll(async () => {
  await Promise.all([gateway?.close(), guarded?.close()]);
  await Promise.all([openai?.close(), stability?.close()]);
  await new Promise((resolve) => sources?.close(resolve));
});

const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${gateway.url}/v1${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });

async function usageOf(tag: string): Promise<Json> {
  const report = await eventually(
    async () =>
      json(await fetch(`${gateway.url}/v1/usage/by-tag`, { headers: { authorization: `Bearer ${key}` } })),
    (r) => r.data.some((row: Json) => row.tag === tag),
    3000,
  );
  return report.data.find((row: Json) => row.tag === tag);
}

const holdsOf = (requestId: unknown) => holdsOfRequest(gateway.runtime.database.pool, requestId);

/** A per-image price line, as the catalog states it in dollars. */
const perImage = (unit: string, dollars: number, quantity: number): PriceLine => ({
  item: unit,
  quantity,
  unitPriceNanosPerMillion: BigInt(Math.round(dollars * 1e9)) * 1_000_000n,
});
const perMillionTokens = (item: string, dollars: number, quantity: number): PriceLine => ({
  item,
  quantity,
  unitPriceNanosPerMillion: BigInt(Math.round(dollars * 1e9)),
});

async function expectCharged(response: Response, tag: string, lines: PriceLine[], units: number) {
  const cents = centsFor(lines);
  expect(Number(response.headers.get('x-cost-cents'))).toBe(cents);
  const row = await usageOf(tag);
  expect(row).toMatchObject({ requests: 1, units });
  expect(row.cost_cents).toBeCloseTo(cents, 7);
}

const lastBody = (sim: Upstream): Json => sim.requests.at(-1)?.body;

describe('POST /v1/images/generations', () => {
  it('generates with dall-e-3 through the OpenAI SDK as base64, billed $0.12 for one hd 1792x1024 image', async () => {
    const tag = freshTag('images-dalle3');
    const prompt = 'a lighthouse at dusk';
    const { data, response } = await client.images
      .generate(
        {
          model: 'openai/dall-e-3',
          prompt,
          size: '1792x1024',
          quality: 'hd',
          style: 'vivid',
          response_format: 'b64_json',
        },
        { headers: { 'x-gw-tag': tag } },
      )
      .withResponse();
    expect(data.data).toHaveLength(1);
    expect(Buffer.from(data.data?.[0]?.b64_json ?? '', 'base64')).toEqual(
      png(imageText('generate', 'dall-e-3', prompt, 0)),
    );
    expect(data.data?.[0]?.revised_prompt).toBe(`A vivid rendering of ${prompt}`);
    expect(typeof data.created).toBe('number');
    expect(response.headers.get('x-model')).toBe('openai/dall-e-3');
    expect(response.headers.get('x-provider')).toBe('openai');
    expect(Number(response.headers.get('x-latency-ms'))).toBeGreaterThanOrEqual(0);
    expect(lastBody(openai)).toEqual({
      model: 'dall-e-3',
      prompt,
      n: 1,
      size: '1792x1024',
      quality: 'hd',
      style: 'vivid',
      response_format: 'b64_json',
    });
    await expectCharged(response, tag, [perImage('image:1792x1024:hd', 0.12, 1)], 1);
  });

  it('answers signed URLs for dall-e-2: fetchable with no key, refused with a tampered signature', async () => {
    const tag = freshTag('images-url');
    const prompt = 'two red apples';
    const response = await post(
      '/images/generations',
      { model: 'openai/dall-e-2', prompt, n: 2, size: '512x512', response_format: 'url' },
      { 'x-gw-tag': tag },
    );
    expect(response.status).toBe(200);
    const body: Json = await json(response);
    expect(body.data).toHaveLength(2);
    for (const [index, item] of body.data.entries()) {
      expect(item.url).toMatch(
        new RegExp(
          `^${gateway.url}/media/images/[\\w.-]+/${index}\\.png\\?expires=\\d+&signature=[0-9a-f]{64}$`,
        ),
      );
      const image = await fetch(item.url);
      expect(image.status).toBe(200);
      expect(image.headers.get('content-type')).toBe('image/png');
      expect(Buffer.from(await image.arrayBuffer())).toEqual(
        png(imageText('generate', 'dall-e-2', prompt, index)),
      );
      const expires = Number(new URL(item.url).searchParams.get('expires'));
      expect(expires - Date.now() / 1000).toBeGreaterThan(3500);
      expect(expires - Date.now() / 1000).toBeLessThanOrEqual(3600);
    }
    const url: string = body.data[0].url;
    const tampered = url.replace(
      /signature=([0-9a-f]+)$/,
      (_, s: string) => `signature=${s.slice(0, -1)}${s.endsWith('0') ? '1' : '0'}`,
    );
    const refused = await fetch(tampered);
    expect(refused.status).toBe(403);
    expect((await json(refused)).error).toMatchObject({ type: 'permission_error', code: 403 });
    // The gateway takes the bytes inline from OpenAI and stores them itself.
    expect(lastBody(openai)).toMatchObject({
      model: 'dall-e-2',
      response_format: 'b64_json',
      quality: 'standard',
    });
    await expectCharged(response, tag, [perImage('image:512x512:standard', 0.018, 2)], 2);
  });

  it('downloads and stores an image the provider answered by URL', async () => {
    openai.answerWithUrls(true);
    try {
      const prompt = 'a paper boat';
      const response = await post('/images/generations', {
        model: 'openai/dall-e-2',
        prompt,
        size: '256x256',
      });
      expect(response.status).toBe(200);
      const url: string = (await json(response)).data[0].url;
      expect(url.startsWith(`${gateway.url}/media/images/`)).toBe(true);
      const image = await fetch(url);
      expect(Buffer.from(await image.arrayBuffer())).toEqual(
        png(imageText('generate', 'dall-e-2', prompt, 0)),
      );
      expect(openai.requests.at(-1)?.path).toMatch(/^\/files\/img-/);
    } finally {
      openai.answerWithUrls(false);
    }
  });

  it('gpt-image-1 with size and quality left to OpenAI: held at the dearest, settled on what OpenAI reports', async () => {
    const tag = freshTag('images-gpt');
    const prompt = 'a watercolor fox in the snow';
    const { data, response } = await client.images
      .generate({ model: 'openai/gpt-image-1', prompt }, { headers: { 'x-gw-tag': tag } })
      .withResponse();
    // OpenAI's GPT image models answer base64 by default, and so does the gateway for them.
    expect(Buffer.from(data.data?.[0]?.b64_json ?? '', 'base64')).toEqual(
      png(imageText('generate', 'gpt-image-1', prompt, 0)),
    );
    expect(lastBody(openai)).toEqual({ model: 'gpt-image-1', prompt, n: 1 });
    await expectCharged(
      response,
      tag,
      [perImage('image:1024x1024:medium', 0.042, 1), perMillionTokens('input_tokens', 5, tokens(prompt))],
      1,
    );
  });

  it("maps the spec's hd to gpt-image-1's high and bills three square high images", async () => {
    const tag = freshTag('images-gpt-hd');
    const prompt = 'a map of an imaginary island';
    const response = await post(
      '/images/generations',
      { model: 'openai/gpt-image-1', prompt, n: 3, size: '1024x1024', quality: 'hd', response_format: 'url' },
      { 'x-gw-tag': tag },
    );
    expect(response.status).toBe(200);
    expect((await json(response)).data).toHaveLength(3);
    expect(lastBody(openai)).toEqual({
      model: 'gpt-image-1',
      prompt,
      n: 3,
      size: '1024x1024',
      quality: 'high',
    });
    await expectCharged(
      response,
      tag,
      [perImage('image:1024x1024:high', 0.167, 3), perMillionTokens('input_tokens', 5, tokens(prompt))],
      3,
    );
  });

  it('generates with Stability (one request per image), sending the nearest aspect ratio and the style preset', async () => {
    const tag = freshTag('images-stability');
    const prompt = 'a neon city street';
    const response = await post(
      '/images/generations',
      { model: 'stability/stable-image-core', prompt, n: 2, size: '1792x1024', style: 'anime' },
      { 'x-gw-tag': tag },
    );
    expect(response.status).toBe(200);
    expect(response.headers.get('x-provider')).toBe('stability');
    const body: Json = await json(response);
    expect(body.data).toHaveLength(2);
    const image = await fetch(body.data[1].url);
    expect(Buffer.from(await image.arrayBuffer())).toEqual(
      png(stabilityText('generate/core', prompt, 'aspect:16:9|style:anime')),
    );
    const sent = stability.requests.slice(-2);
    for (const request of sent) {
      expect(request.path).toBe('/v2beta/stable-image/generate/core');
      expect(request.headers.accept).toBe('image/*');
      expect(request.headers.authorization).toBe('Bearer sk-upstream-stability');
      expect(request.body).toEqual({
        prompt,
        output_format: 'png',
        aspect_ratio: '16:9',
        style_preset: 'anime',
        files: {},
      });
    }
    await expectCharged(response, tag, [perImage('image', 0.03, 2)], 2);
  });

  it('reaches SD3.5 through the sd3 endpoint with its model named, as base64', async () => {
    const prompt = 'a bowl of ramen';
    const response = await post('/images/generations', {
      model: 'stability/sd3.5-large',
      prompt,
      response_format: 'b64_json',
    });
    expect(response.status).toBe(200);
    const body: Json = await json(response);
    expect(Buffer.from(body.data[0].b64_json, 'base64')).toEqual(
      png(stabilityText('generate/sd3', prompt, 'aspect:1:1|model:sd3.5-large')),
    );
    expect(Number(response.headers.get('x-cost-cents'))).toBe(centsFor([perImage('image', 0.065, 1)]));
  });

  it.each([
    ['a missing prompt', { model: 'openai/dall-e-2' }, "'prompt'"],
    ['n of the wrong type', { model: 'openai/dall-e-2', prompt: 'p', n: 'two' }, "'n'"],
    ['n above 10', { model: 'openai/dall-e-2', prompt: 'p', n: 11 }, "'n'"],
    ['a size not in WxH form', { model: 'openai/dall-e-2', prompt: 'p', size: 'large' }, "'size'"],
    ['a size the model does not make', { model: 'openai/dall-e-3', prompt: 'p', size: '512x512' }, "'size'"],
    [
      'a quality the model does not take',
      { model: 'openai/dall-e-3', prompt: 'p', quality: 'low' },
      "'quality'",
    ],
    ['an unknown quality', { model: 'openai/dall-e-3', prompt: 'p', quality: 'ultra' }, "'quality'"],
    ['n above the model limit', { model: 'openai/dall-e-3', prompt: 'p', n: 2 }, "'n'"],
    ['a style the model does not take', { model: 'openai/dall-e-2', prompt: 'p', style: 'vivid' }, "'style'"],
    [
      'an unknown response_format',
      { model: 'openai/dall-e-2', prompt: 'p', response_format: 'png' },
      "'response_format'",
    ],
    ['a streamed request', { model: 'openai/gpt-image-1', prompt: 'p', stream: true }, "'stream'"],
  ])('refuses %s with 400 naming the field', async (_, body, field) => {
    const response = await post('/images/generations', body);
    expect(response.status).toBe(400);
    const error = (await json(response)).error;
    expect(error).toMatchObject({ type: 'invalid_request_error', code: 400 });
    expect(error.message).toContain(field);
  });

  it.each([
    ['openai/gpt-4o', '/v1/chat/completions'],
    ['openai/text-embedding-3-small', '/v1/embeddings'],
    ['stability/stable-image-inpaint', '/v1/images/edits'],
  ])('refuses %s with 400 naming its endpoint', async (model, path) => {
    const response = await post('/images/generations', { model, prompt: 'p' });
    expect(response.status).toBe(400);
    expect((await json(response)).error.message).toContain(path);
  });

  it('turns a provider 5xx into 502 provider_error and releases the hold', async () => {
    openai.script({ kind: 'error', status: 500 });
    const response = await post('/images/generations', { model: 'openai/dall-e-2', prompt: 'p', n: 4 });
    expect(response.status).toBe(502);
    expect((await json(response)).error).toMatchObject({ type: 'provider_error', code: 502 });
    expect(await holdsOf(response.headers.get('x-request-id'))).toEqual(['failed']);
  });

  it("passes Stability's own refusal on as 400 and releases the hold", async () => {
    const response = await post('/images/generations', {
      model: 'stability/stable-image-ultra',
      prompt: 'forbidden',
    });
    expect(response.status).toBe(400);
    expect((await json(response)).error.message).toContain('content moderation');
    expect(await holdsOf(response.headers.get('x-request-id'))).toEqual(['failed']);
  });
});

describe('POST /v1/images/edits', () => {
  it('edits an uploaded image and mask through the OpenAI SDK (multipart), sent upstream as multipart', async () => {
    const tag = freshTag('images-edit');
    const prompt = 'add a rainbow';
    const { data, response } = await client.images
      .edit(
        {
          model: 'openai/dall-e-2',
          image: await toFile(SOURCE, 'source.png', { type: 'image/png' }),
          mask: await toFile(MASK, 'mask.png', { type: 'image/png' }),
          prompt,
          size: '512x512',
          response_format: 'url',
        },
        { headers: { 'x-gw-tag': tag } },
      )
      .withResponse();
    const url = data.data?.[0]?.url ?? '';
    const image = await fetch(url);
    const { createHash } = await import('node:crypto');
    const source = `${createHash('sha256').update(SOURCE).digest('hex').slice(0, 12)}+mask:${MASK.length}`;
    expect(Buffer.from(await image.arrayBuffer())).toEqual(
      png(imageText('edit', 'dall-e-2', prompt, 0, source)),
    );
    const sent = openai.requests.at(-1);
    expect(sent?.path).toBe('/v1/images/edits');
    expect(sent?.headers['content-type']).toMatch(/^multipart\/form-data; boundary=/);
    expect(sent?.body).toEqual({
      model: 'dall-e-2',
      prompt,
      n: '1',
      size: '512x512',
      quality: 'standard',
      response_format: 'b64_json',
      files: {
        image: { filename: 'source.png', type: 'image/png', size: SOURCE.length },
        mask: { filename: 'mask.png', type: 'image/png', size: MASK.length },
      },
    });
    await expectCharged(response, tag, [perImage('image:512x512:standard', 0.018, 1)], 1);
  });

  it('edits an image named by URL in a JSON body with the default edit model, gpt-image-1', async () => {
    const tag = freshTag('images-edit-json');
    const prompt = 'make it night';
    const response = await post(
      '/images/edits',
      { image: `${sourceUrl}/source.png`, prompt },
      { 'x-gw-tag': tag },
    );
    expect(response.status).toBe(200);
    expect(response.headers.get('x-model')).toBe('openai/gpt-image-1');
    const body: Json = await json(response);
    const { createHash } = await import('node:crypto');
    const source = createHash('sha256').update(SOURCE).digest('hex').slice(0, 12);
    expect(Buffer.from(body.data[0].b64_json, 'base64')).toEqual(
      png(imageText('edit', 'gpt-image-1', prompt, 0, source)),
    );
    expect(openai.requests.at(-1)?.body).toMatchObject({
      model: 'gpt-image-1',
      files: { image: { filename: 'image-image.png', type: 'image/png', size: SOURCE.length } },
    });
    await expectCharged(
      response,
      tag,
      [
        perImage('image:1024x1024:medium', 0.042, 1),
        perMillionTokens('input_tokens', 5, tokens(prompt)),
        perMillionTokens('input_image_tokens', 10, IMAGE_TOKENS_PER_INPUT),
      ],
      1,
    );
  });

  it('inpaints a base64 data URL with Stability', async () => {
    const tag = freshTag('images-inpaint');
    const prompt = 'fill with flowers';
    const response = await post(
      '/images/edits',
      {
        model: 'stability/stable-image-inpaint',
        image: `data:image/png;base64,${SOURCE.toString('base64')}`,
        mask: MASK.toString('base64'),
        prompt,
        response_format: 'url',
      },
      { 'x-gw-tag': tag },
    );
    expect(response.status).toBe(200);
    const body: Json = await json(response);
    const image = await fetch(body.data[0].url);
    const { createHash } = await import('node:crypto');
    const detail = `source:${createHash('sha256').update(SOURCE).digest('hex').slice(0, 12)}|mask:${MASK.length}`;
    expect(Buffer.from(await image.arrayBuffer())).toEqual(
      png(stabilityText('edit/inpaint', prompt, detail)),
    );
    expect(stability.requests.at(-1)).toMatchObject({
      path: '/v2beta/stable-image/edit/inpaint',
      body: {
        prompt,
        output_format: 'png',
        files: { image: { size: SOURCE.length }, mask: { size: MASK.length } },
      },
    });
    await expectCharged(response, tag, [perImage('image', 0.05, 1)], 1);
  });

  it('refuses an upload over 25 MB with 413 naming the field', async () => {
    const form = new FormData();
    form.append('prompt', 'too big');
    form.append('model', 'openai/gpt-image-1');
    form.append('image', new Blob([Buffer.alloc(25 * 1024 * 1024 + 1)], { type: 'image/png' }), 'big.png');
    const response = await fetch(`${gateway.url}/v1/images/edits`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}` },
      body: form,
    });
    expect(response.status).toBe(413);
    const error = (await json(response)).error;
    expect(error).toMatchObject({ type: 'invalid_request_error', code: 413 });
    expect(error.message).toContain("'image'");
  });

  it.each([
    ['a missing prompt', () => ({ image: SOURCE.toString('base64') }), "'prompt'"],
    ['a missing image', () => ({ prompt: 'p' }), "'image'"],
    ['an image neither URL nor base64', () => ({ image: 'not an image!', prompt: 'p' }), "'image'"],
    ['an unreachable image URL', () => ({ image: 'http://127.0.0.1:1/x.png', prompt: 'p' }), "'image'"],
    ['an image URL that answers 404', () => ({ image: `${sourceUrl}/missing.png`, prompt: 'p' }), "'image'"],
    ['a file: URL', () => ({ image: 'file:///etc/passwd', prompt: 'p' }), "'image'"],
    ['n of the wrong type', () => ({ image: SOURCE.toString('base64'), prompt: 'p', n: '2' }), "'n'"],
    [
      'a size for a model that keeps the source size',
      () => ({
        model: 'stability/stable-image-inpaint',
        image: SOURCE.toString('base64'),
        prompt: 'p',
        size: '1024x1024',
      }),
      "'size'",
    ],
  ])('refuses %s in a JSON edit with 400 naming the field', async (_, body, field) => {
    const response = await post('/images/edits', body());
    expect(response.status).toBe(400);
    const error = (await json(response)).error;
    expect(error).toMatchObject({ type: 'invalid_request_error', code: 400 });
    expect(error.message).toContain(field);
  });

  it('refuses a multipart edit with a non-integer n or no image', async () => {
    const form = new FormData();
    form.append('prompt', 'p');
    form.append('n', 'many');
    form.append('image', new Blob([SOURCE], { type: 'image/png' }), 'source.png');
    const wrongN = await fetch(`${gateway.url}/v1/images/edits`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}` },
      body: form,
    });
    expect(wrongN.status).toBe(400);
    expect((await json(wrongN)).error.message).toContain("'n'");
    const noImage = new FormData();
    noImage.append('prompt', 'p');
    const missing = await fetch(`${gateway.url}/v1/images/edits`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}` },
      body: noImage,
    });
    expect(missing.status).toBe(400);
    expect((await json(missing)).error.message).toContain("'image'");
  });

  it('refuses dall-e-3 for edits, naming the generations endpoint', async () => {
    const response = await post('/images/edits', {
      model: 'openai/dall-e-3',
      image: SOURCE.toString('base64'),
      prompt: 'p',
    });
    expect(response.status).toBe(400);
    expect((await json(response)).error.message).toContain('/v1/images/generations');
  });

  it('releases the hold when the provider fails an edit', async () => {
    stability.script({ kind: 'error', status: 500 });
    const response = await post('/images/edits', {
      model: 'stability/stable-image-inpaint',
      image: SOURCE.toString('base64'),
      prompt: 'p',
    });
    expect(response.status).toBe(502);
    const error = (await json(response)).error;
    expect(error).toMatchObject({ type: 'provider_error', code: 502 });
    expect(error.message).toContain('An unexpected server error has occurred');
    expect(await holdsOf(response.headers.get('x-request-id'))).toEqual(['failed']);
  });
});

describe('image URLs on a gateway that keeps to public addresses', () => {
  it('refuses a private source URL with 400 naming the field', async () => {
    const response = await fetch(`${guarded.url}/v1/images/edits`, {
      method: 'POST',
      headers: { authorization: `Bearer ${guardedKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'openai/gpt-image-1', image: `${sourceUrl}/source.png`, prompt: 'p' }),
    });
    expect(response.status).toBe(400);
    const error = (await json(response)).error;
    expect(error).toMatchObject({ type: 'invalid_request_error', code: 400 });
    expect(error.message).toMatch(/'image': .*private or reserved address/);
  });
});

describe('GET /v1/models?modality=image', () => {
  it('lists the image models with per-image prices and whether this gateway serves them', async () => {
    const response = await fetch(`${gateway.url}/v1/models?modality=image&all=true`, {
      headers: { authorization: `Bearer ${key}` },
    });
    const models: Json[] = (await json(response)).data;
    const byId = new Map(models.map((m) => [m.id, m]));
    expect(byId.get('openai/dall-e-3')).toMatchObject({
      modality: 'image',
      available: true,
      capabilities: ['image-generation'],
      pricing: { per_unit_usd: { 'image:1024x1024:standard': 0.04, 'image:1792x1024:hd': 0.12 } },
    });
    expect(byId.get('openai/gpt-image-1')).toMatchObject({
      available: true,
      pricing: {
        input_per_million_usd: 5,
        per_unit_usd: { 'image:1536x1024:high': 0.25, input_image_token: 0.00001 },
      },
    });
    expect(byId.get('stability/stable-image-inpaint')).toMatchObject({
      available: true,
      capabilities: ['image-editing'],
      pricing: { per_unit_usd: { image: 0.05 } },
    });
    // Priced by the token only: no per-image price to hold against.
    expect(byId.get('openai/gpt-image-1.5')?.available).toBe(false);
  });
});
