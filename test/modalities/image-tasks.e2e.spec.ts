import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dollarsPerMillion } from '../../src/contracts/money.ts';
import { type Json, json } from '../support/json.ts';
import { URL_DOCUMENT_PAGES } from '../upstreams/mistral-ocr.ts';
import { centsFor, freshTag } from './support.ts';
import { expectFieldError, PDF, PNG, startTextTaskWorld, type TextTaskWorld } from './text-tasks-support.ts';

/** Google Vision's $2.25 per 1,000 images and Mistral OCR's $4 per 1,000 pages, per million units. */
const PER_MILLION_IMAGES = dollarsPerMillion('2250');
const PER_MILLION_PAGES = dollarsPerMillion('4000');

let world: TextTaskWorld;
/** The same gateway with the URL guard's default: private addresses refused. */
let guarded: TextTaskWorld;
beforeAll(async () => {
  [world, guarded] = await Promise.all([startTextTaskWorld(), startTextTaskWorld({ allowPrivate: false })]);
});
afterAll(async () => {
  await Promise.all([world?.close(), guarded?.close()]);
});

const PERSON = {
  label: 'Person',
  score: 0.92,
  box: { x_min: 0.1, y_min: 0, x_max: 0.5, y_max: 0.9 },
  label_id: '/m/01g317',
};
const CAR = {
  label: 'Car',
  score: 0.81,
  box: { x_min: 0.55, y_min: 0.4, x_max: 0.95, y_max: 0.8 },
  label_id: '/m/0k4j',
};

describe('POST /v1/detections', () => {
  it('finds objects in a base64 image with Google Vision by default, billed $2.25 per 1,000 images', async () => {
    const tag = freshTag('detect');
    const response = await world.post(
      '/detections',
      { image_b64: PNG.toString('base64') },
      { 'x-gw-tag': tag },
    );
    expect(response.status).toBe(200);
    expect(await json(response)).toEqual({
      object: 'list',
      model: 'google-vision/object-localization',
      data: [PERSON, CAR],
      usage: { images: 1 },
    });
    const sent = world.sims.vision.requests.at(-1);
    expect(sent?.path).toBe('/v1/images:annotate');
    expect(sent?.headers['x-goog-api-key']).toBe('upstream-vision');
    expect(sent?.body).toEqual({
      requests: [
        {
          image: { content: PNG.toString('base64') },
          features: [{ type: 'OBJECT_LOCALIZATION', maxResults: 10 }],
        },
      ],
    });
    const cents = centsFor([{ item: 'images', quantity: 1, unitPriceNanosPerMillion: PER_MILLION_IMAGES }]);
    expect(Number(response.headers.get('x-cost-cents'))).toBe(cents);
    expect(response.headers.get('x-provider')).toBe('google-vision');
    const row = await world.usageOf(tag);
    expect(row).toMatchObject({ requests: 1, units: 1 });
    expect(row.cost_cents).toBeCloseTo(cents, 7);
  });

  it('fetches an image_url itself and sends Google the bytes; max_results limits the objects', async () => {
    const response = await world.post('/detections', {
      model: 'google-vision/object-localization',
      image_url: `${world.images.url}/cat.png`,
      max_results: 1,
    });
    expect(response.status).toBe(200);
    expect((await json(response)).data).toEqual([PERSON]);
    expect(world.images.hits).toContain('/cat.png');
    const request: Json = world.sims.vision.requests.at(-1)?.body;
    expect(request.requests[0].image.content).toBe(PNG.toString('base64'));
    expect(request.requests[0].features[0].maxResults).toBe(1);
  });

  it('accepts a data: URL as image_b64', async () => {
    const response = await world.post('/detections', {
      image_b64: `data:image/png;base64,${PNG.toString('base64')}`,
    });
    expect(response.status).toBe(200);
  });

  it('refuses an image Google cannot read with 400 and releases the hold', async () => {
    const response = await world.post('/detections', {
      image_b64: Buffer.from('not an image').toString('base64'),
    });
    const message = await expectFieldError(response, 'Bad image data');
    expect(message).toContain('The provider refused the request');
    expect(await world.holdsOf(response.headers.get('x-request-id'))).toEqual(['failed']);
  });

  it('turns a Google 5xx into 502 provider_error and releases the hold', async () => {
    world.sims.vision.script({ kind: 'error', status: 500 });
    const response = await world.post('/detections', { image_b64: PNG.toString('base64') });
    expect(response.status).toBe(502);
    expect((await json(response)).error).toMatchObject({ type: 'provider_error', code: 502 });
    expect(await world.holdsOf(response.headers.get('x-request-id'))).toEqual(['failed']);
  });

  it.each([
    ['neither image_url nor image_b64', {}, "'image_url'"],
    [
      'both image_url and image_b64',
      { image_url: 'https://example.com/a.png', image_b64: 'AAAA' },
      "'image_b64'",
    ],
    ['an image_b64 that is not base64', { image_b64: 'not base64!' }, "'image_b64'"],
    ['an image_url of the wrong type', { image_url: 42 }, "'image_url'"],
    ['a max_results out of range', { image_b64: 'AAAA', max_results: 0 }, "'max_results'"],
    ['an image_url that is not http(s)', { image_url: 'file:///etc/passwd' }, "'image_url'"],
  ])('refuses %s with 400 naming the field', async (_, body, field) => {
    await expectFieldError(await world.post('/detections', body), field);
  });

  it('refuses an image_url that answers 404 or cannot be reached, naming the field', async () => {
    const missing = await world.post('/detections', { image_url: `${world.images.url}/missing.png` });
    expect(await expectFieldError(missing, "'image_url'")).toContain('HTTP 404');
    const closed = await world.post('/detections', { image_url: 'http://127.0.0.1:1/cat.png' });
    expect(await expectFieldError(closed, "'image_url'")).toContain('could not fetch');
  });

  it('refuses a private address unless GATEWAY_ALLOW_PRIVATE_URLS=true, before anything is fetched', async () => {
    const hits = guarded.images.hits.length;
    const response = await guarded.post('/detections', { image_url: `${guarded.images.url}/cat.png` });
    expect(await expectFieldError(response, "'image_url'")).toContain('private or reserved address');
    expect(guarded.images.hits.length).toBe(hits);
  });

  it('refuses a chat model, naming the chat endpoint', async () => {
    const message = await expectFieldError(
      await world.post('/detections', { model: 'openai/gpt-4o-mini', image_b64: 'AAAA' }),
      "'model'",
    );
    expect(message).toContain('POST /v1/chat/completions');
  });
});

describe('POST /v1/ocr', () => {
  it('reads a base64 image with Mistral OCR by default, billed per page at $4 per 1,000', async () => {
    const tag = freshTag('ocr');
    const response = await world.post('/ocr', { image_b64: PNG.toString('base64') }, { 'x-gw-tag': tag });
    expect(response.status).toBe(200);
    expect(await json(response)).toEqual({
      object: 'ocr',
      model: 'mistral/mistral-ocr-latest',
      text: 'Page 1 of image',
      pages: [{ index: 0, text: 'Page 1 of image' }],
      usage: { pages: 1 },
    });
    const sent = world.sims.mistral.requests.at(-1);
    expect(sent?.path).toBe('/v1/ocr');
    expect(sent?.body).toEqual({
      model: 'mistral-ocr-latest',
      document: { type: 'image_url', image_url: `data:image/png;base64,${PNG.toString('base64')}` },
      include_image_base64: false,
    });
    const cents = centsFor([{ item: 'pages', quantity: 1, unitPriceNanosPerMillion: PER_MILLION_PAGES }]);
    expect(Number(response.headers.get('x-cost-cents'))).toBe(cents);
    const row = await world.usageOf(tag);
    expect(row).toMatchObject({ requests: 1, units: 1 });
    expect(row.cost_cents).toBeCloseTo(cents, 7);
  });

  it('sends a base64 PDF as a document and bills every page read', async () => {
    const tag = freshTag('ocr-pdf');
    const response = await world.post('/ocr', { image_b64: PDF.toString('base64') }, { 'x-gw-tag': tag });
    expect(response.status).toBe(200);
    const body = await json(response);
    expect(body.text).toBe('Page 1 of document\n\nPage 2 of document');
    expect(body.usage).toEqual({ pages: 2 });
    const sent: Json = world.sims.mistral.requests.at(-1)?.body;
    expect(sent.document.type).toBe('document_url');
    const cents = centsFor([{ item: 'pages', quantity: 2, unitPriceNanosPerMillion: PER_MILLION_PAGES }]);
    expect((await world.usageOf(tag)).cost_cents).toBeCloseTo(cents, 7);
  });

  it('hands Mistral a document URL as it is, after checking it, with the pages asked for', async () => {
    const url = `${world.images.url}/doc.pdf`;
    const response = await world.post('/ocr', { image_url: url, pages: [0, 2] });
    expect(response.status).toBe(200);
    const body = await json(response);
    expect(body.pages.map((p: Json) => p.index)).toEqual([0, 2]);
    expect(body.usage).toEqual({ pages: 2 });
    expect(world.sims.mistral.requests.at(-1)?.body).toMatchObject({
      document: { type: 'document_url', document_url: url },
      pages: [0, 2],
    });
    const whole = await world.post('/ocr', { image_url: url });
    expect((await json(whole)).usage).toEqual({ pages: URL_DOCUMENT_PAGES });
  });

  it('turns a Mistral 5xx into 502 provider_error and releases the hold', async () => {
    world.sims.mistral.script({ kind: 'error', status: 503 });
    const response = await world.post('/ocr', { image_b64: PNG.toString('base64') });
    expect(response.status).toBe(502);
    expect(await world.holdsOf(response.headers.get('x-request-id'))).toEqual(['failed']);
  });

  it.each([
    ['neither image_url nor image_b64', {}, "'image_url'"],
    [
      'both image_url and image_b64',
      { image_url: 'https://example.com/a.pdf', image_b64: 'AAAA' },
      "'image_b64'",
    ],
    [
      'bytes that are neither an image nor a PDF',
      { image_b64: Buffer.from('plain text').toString('base64') },
      "'image_b64'",
    ],
    ['repeated pages', { image_b64: 'AAAA', pages: [1, 1] }, "'pages'"],
    ['a negative page', { image_b64: 'AAAA', pages: [-1] }, "'pages.0'"],
  ])('refuses %s with 400 naming the field', async (_, body, field) => {
    await expectFieldError(await world.post('/ocr', body), field);
  });

  it('refuses a private address unless GATEWAY_ALLOW_PRIVATE_URLS=true', async () => {
    const before = guarded.sims.mistral.requests.length;
    const response = await guarded.post('/ocr', { image_url: `${guarded.images.url}/doc.pdf` });
    expect(await expectFieldError(response, "'image_url'")).toContain('private or reserved address');
    expect(guarded.sims.mistral.requests.length).toBe(before);
  });
});

describe('GET /v1/models for these endpoints', () => {
  it('lists the translation, detection and OCR models with their per-unit prices, available here', async () => {
    const get = async (id: string) => json(await world.get(`/models/${id}`));
    expect(await get('deepl/translate')).toMatchObject({
      modality: 'translation',
      capabilities: ['translation'],
      available: true,
      pricing: { per_unit_usd: { character: 0.000025 } },
    });
    expect(await get('google-vision/object-localization')).toMatchObject({
      modality: 'object-detection',
      available: true,
      pricing: { per_unit_usd: { image: 0.00225 } },
    });
    expect(await get('mistral/mistral-ocr-latest')).toMatchObject({
      modality: 'ocr',
      available: true,
      pricing: { per_unit_usd: { page: 0.004 } },
    });
  });
});
