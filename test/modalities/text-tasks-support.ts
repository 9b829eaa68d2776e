import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { eventually, startTestGateway, type TestGateway } from '../support/gateway.ts';
import { holdsOf } from '../support/holds.ts';
import { type Json, json } from '../support/json.ts';
import { startDeeplUpstream } from '../upstreams/deepl.ts';
import { startGoogleVisionUpstream } from '../upstreams/google-vision.ts';
import { startMistralUpstream } from '../upstreams/mistral.ts';
import { startOpenAiUpstream } from '../upstreams/openai.ts';
import type { Upstream } from '../upstreams/types.ts';

/** A PNG as far as anyone here looks: its signature, then anything. */
export const PNG = Buffer.concat([
  Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
  Buffer.from('a simulated image'),
]);
/** A two-page PDF skeleton: a page tree with /Count 2 and two page objects. */
export const PDF = Buffer.from(
  [
    '%PDF-1.4',
    '1 0 obj << /Type /Catalog /Pages 2 0 R >> endobj',
    '2 0 obj << /Type /Pages /Kids [3 0 R 4 0 R] /Count 2 >> endobj',
    '3 0 obj << /Type /Page /Parent 2 0 R >> endobj',
    '4 0 obj << /Type /Page /Parent 2 0 R >> endobj',
    '%%EOF',
  ].join('\n'),
  'latin1',
);

/** Serves the test images (`/cat.png`, `/doc.pdf`) to the gateway, as a client's image host would; 404 otherwise. */
export async function startImageHost(): Promise<{ url: string; hits: string[]; close(): Promise<void> }> {
  const hits: string[] = [];
  const files: Record<string, [string, Buffer]> = {
    '/cat.png': ['image/png', PNG],
    '/doc.pdf': ['application/pdf', PDF],
  };
  const server = createServer((req, res) => {
    hits.push(req.url ?? '');
    const file = files[req.url ?? ''];
    if (!file) return void res.writeHead(404).end('not found');
    res.writeHead(200, { 'content-type': file[0], 'content-length': String(file[1].length) }).end(file[1]);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    hits,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

export interface TextTaskWorld {
  gateway: TestGateway;
  sims: { openai: Upstream; deepl: Upstream; vision: Upstream; mistral: Upstream };
  images: Awaited<ReturnType<typeof startImageHost>>;
  post(path: string, body: unknown, headers?: Record<string, string>): Promise<Response>;
  get(path: string): Promise<Response>;
  usageOf(tag: string): Promise<Json>;
  holdsOf(requestId: string | null): Promise<string[]>;
  close(): Promise<void>;
}

/**
 * A gateway whose providers are simulators (OpenAI chat, DeepL, Google Vision, Mistral) and a funded account on
 * it. Private URLs are allowed (the image host is on 127.0.0.1) unless `allowPrivate` is false.
 */
export async function startTextTaskWorld(options: { allowPrivate?: boolean; deepl?: boolean } = {}) {
  const [openai, deepl, vision, mistral, images] = await Promise.all([
    startOpenAiUpstream(),
    startDeeplUpstream(),
    startGoogleVisionUpstream(),
    startMistralUpstream(),
    startImageHost(),
  ]);
  const gateway = await startTestGateway({
    OPENAI_API_KEY: 'sk-upstream-openai',
    OPENAI_BASE_URL: `${openai.url}/v1`,
    ...(options.deepl !== false && { DEEPL_API_KEY: 'upstream-deepl', DEEPL_BASE_URL: deepl.url }),
    GOOGLE_VISION_API_KEY: 'upstream-vision',
    GOOGLE_VISION_BASE_URL: vision.url,
    MISTRAL_API_KEY: 'upstream-mistral',
    MISTRAL_BASE_URL: `${mistral.url}/v1`,
    GATEWAY_UPSTREAM_TIMEOUT_MS: '1500',
    GATEWAY_MAX_RETRY_WAIT_MS: '2000',
    ...(options.allowPrivate !== false && { GATEWAY_ALLOW_PRIVATE_URLS: 'true' }),
  });
  const account = await json(await gateway.admin('/accounts', { name: 'text-tasks' }));
  await gateway.admin(`/accounts/${account.account_id}/top-ups`, { cents: 10_000, reference: 'funding' });
  const authorization = `Bearer ${account.key}`;
  const world: TextTaskWorld = {
    gateway,
    sims: { openai, deepl, vision, mistral },
    images,
    post: (path, body, headers = {}) =>
      fetch(`${gateway.url}/v1${path}`, {
        method: 'POST',
        headers: { authorization, 'content-type': 'application/json', ...headers },
        body: JSON.stringify(body),
      }),
    get: (path) => fetch(`${gateway.url}/v1${path}`, { headers: { authorization } }),
    async usageOf(tag) {
      const report = await eventually(
        async () => json(await fetch(`${gateway.url}/v1/usage/by-tag`, { headers: { authorization } })),
        (r) => r.data.some((row: Json) => row.tag === tag),
        3000,
      );
      return report.data.find((row: Json) => row.tag === tag);
    },
    holdsOf: (requestId) => holdsOf(gateway.runtime.database.pool, requestId),
    async close() {
      await gateway.close();
      await Promise.all([openai, deepl, vision, mistral, images].map((sim) => sim.close()));
    },
  };
  return world;
}

/** A 400 in the API's error shape whose message names the field. */
export async function expectFieldError(response: Response, field: string, status = 400): Promise<string> {
  const body = await json(response);
  if (
    response.status !== status ||
    body.error?.code !== status ||
    !String(body.error?.message).includes(field)
  ) {
    throw new Error(`expected ${status} naming ${field}, got ${response.status} ${JSON.stringify(body)}`);
  }
  if (status === 400 && body.error.type !== 'invalid_request_error')
    throw new Error(`type ${body.error.type}`);
  return body.error.message;
}
