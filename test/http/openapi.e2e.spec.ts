import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';
import { json } from '../support/json.ts';

interface Operation {
  responses?: Record<string, { content?: Record<string, { schema?: unknown }> }>;
}
interface Document {
  openapi: string;
  info: { version: string };
  paths: Record<string, Record<string, Operation>>;
  components?: { schemas?: Record<string, unknown> };
}

let gateway: TestGateway;
let doc: Document;
let key: string;
let accountId: string;
const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats.default(ajv);

beforeAll(async () => {
  gateway = await startTestGateway();
  const account = await json(await gateway.admin('/accounts', { name: 'openapi' }));
  key = account.key;
  accountId = account.account_id;
  await gateway.admin(`/accounts/${accountId}/top-ups`, { cents: 1000, reference: 'openapi' });
  const response = await fetch(`${gateway.url}/v1/openapi.json`);
  expect(response.status).toBe(200);
  doc = (await response.json()) as Document;
  ajv.addSchema({ $id: 'openapi', components: doc.components ?? {} } as never);
});
afterAll(async () => {
  await gateway?.close();
});

/** The schema the document gives for this route, method and status (its exact status, else `4XX` / `5XX`). */
function schemaFor(path: string, method: string, status: number): unknown {
  const operation = doc.paths[path]?.[method.toLowerCase()];
  if (!operation) throw new Error(`the document has no ${method} ${path}`);
  const response = operation.responses?.[String(status)] ?? operation.responses?.[`${String(status)[0]}XX`];
  const schema = response?.content?.['application/json']?.schema;
  if (!schema) throw new Error(`the document has no ${status} body for ${method} ${path}`);
  return schema;
}

/** Validates a body against the document; the errors, or [] when it conforms. */
function violations(path: string, method: string, status: number, body: unknown): string[] {
  // Component references point into the document's components, registered as "openapi".
  const schema = JSON.parse(
    JSON.stringify(schemaFor(path, method, status)).replaceAll('"#/components/', '"openapi#/components/'),
  );
  const validate = ajv.compile(schema as object);
  return validate(body)
    ? []
    : (validate.errors ?? []).map(
        (e: { instancePath: string; message?: string }) => `${e.instancePath} ${e.message}`,
      );
}

interface Replayed {
  /** The document's path template. */
  path: string;
  method: string;
  url: string;
  body?: unknown;
  form?: () => FormData;
  credential: 'key' | 'admin' | 'none';
  status: number;
}

const chat = { model: 'local/echo', messages: [{ role: 'user', content: 'hello' }] };

/** Representative requests of several endpoints, answered by the real gateway. */
const REQUESTS = (): Replayed[] => [
  {
    path: '/v1/chat/completions',
    method: 'POST',
    url: '/v1/chat/completions',
    body: chat,
    credential: 'key',
    status: 200,
  },
  {
    path: '/v1/chat/completions',
    method: 'POST',
    url: '/v1/chat/completions',
    body: { ...chat, model: 'nobody/nothing' },
    credential: 'key',
    status: 404,
  },
  {
    path: '/v1/chat/completions',
    method: 'POST',
    url: '/v1/chat/completions',
    body: { model: 'local/echo' },
    credential: 'key',
    status: 400,
  },
  {
    path: '/v1/embeddings',
    method: 'POST',
    url: '/v1/embeddings',
    body: { model: 'local/embed', input: ['one', 'two'] },
    credential: 'key',
    status: 200,
  },
  { path: '/v1/balance', method: 'GET', url: '/v1/balance', credential: 'key', status: 200 },
  { path: '/v1/balance', method: 'GET', url: '/v1/balance', credential: 'none', status: 401 },
  { path: '/v1/models', method: 'GET', url: '/v1/models?available=true', credential: 'key', status: 200 },
  {
    path: '/v1/sub-accounts',
    method: 'POST',
    url: '/v1/sub-accounts',
    body: { name: 'c', spend_cap_cents: 10 },
    credential: 'key',
    status: 200,
  },
  { path: '/v1/sub-accounts', method: 'GET', url: '/v1/sub-accounts', credential: 'key', status: 200 },
  {
    path: '/v1/sub-accounts/{id}',
    method: 'GET',
    url: '/v1/sub-accounts/sub_nobody',
    credential: 'key',
    status: 404,
  },
  {
    path: '/v1/files',
    method: 'POST',
    url: '/v1/files',
    form: () => {
      const form = new FormData();
      form.append('purpose', 'batch');
      form.append('file', new Blob(['{"a":1}\n']), 'lines.jsonl');
      return form;
    },
    credential: 'key',
    status: 200,
  },
  { path: '/v1/files', method: 'GET', url: '/v1/files', credential: 'key', status: 200 },
  { path: '/v1/usage/by-tag', method: 'GET', url: '/v1/usage/by-tag', credential: 'key', status: 200 },
  {
    path: '/v1/usage/by-sub-account',
    method: 'GET',
    url: '/v1/usage/by-sub-account',
    credential: 'key',
    status: 200,
  },
  { path: '/admin/accounts', method: 'GET', url: '/admin/accounts', credential: 'admin', status: 200 },
  {
    path: '/admin/accounts',
    method: 'POST',
    url: '/admin/accounts',
    body: { name: 'more' },
    credential: 'admin',
    status: 200,
  },
  {
    path: '/admin/accounts/{accountId}',
    method: 'GET',
    url: `/admin/accounts/${accountId}`,
    credential: 'admin',
    status: 200,
  },
  {
    path: '/admin/keys',
    method: 'GET',
    url: `/admin/keys?account=${accountId}`,
    credential: 'admin',
    status: 200,
  },
  {
    path: '/admin/accounts/{accountId}/balance',
    method: 'GET',
    url: `/admin/accounts/${accountId}/balance`,
    credential: 'admin',
    status: 200,
  },
  {
    path: '/admin/accounts/{accountId}/usage',
    method: 'GET',
    url: `/admin/accounts/${accountId}/usage`,
    credential: 'admin',
    status: 200,
  },
  {
    path: '/admin/accounts/{accountId}/usage',
    method: 'GET',
    url: '/admin/accounts/acct_nobody/usage',
    credential: 'admin',
    status: 404,
  },
  { path: '/v1/provider-keys', method: 'GET', url: '/v1/provider-keys', credential: 'key', status: 200 },
  {
    path: '/admin/providers/credentials',
    method: 'GET',
    url: '/admin/providers/credentials',
    credential: 'admin',
    status: 200,
  },
  {
    path: '/admin/providers/{provider}/credentials',
    method: 'GET',
    url: '/admin/providers/openai/credentials',
    credential: 'admin',
    status: 200,
  },
  { path: '/healthz', method: 'GET', url: '/healthz', credential: 'none', status: 200 },
  { path: '/readyz', method: 'GET', url: '/readyz', credential: 'none', status: 200 },
];

async function replay(request: Replayed): Promise<{ status: number; body: unknown }> {
  const token =
    request.credential === 'key' ? key : request.credential === 'admin' ? gateway.adminToken : undefined;
  const headers: Record<string, string> = token ? { authorization: `Bearer ${token}` } : {};
  let body: string | FormData | undefined;
  if (request.form) body = request.form();
  else if (request.body !== undefined) {
    body = JSON.stringify(request.body);
    headers['content-type'] = 'application/json';
  }
  const response = await fetch(`${gateway.url}${request.url}`, { method: request.method, headers, body });
  return { status: response.status, body: await response.json() };
}

describe('OpenAPI document', () => {
  it('is OpenAPI 3.1 of API version 1, with the client, operator and probe routes', () => {
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.info.version).toBe('1');
    for (const path of [
      '/v1/chat/completions',
      '/v1/files/{id}',
      '/admin/accounts',
      '/healthz',
      '/readyz',
      '/metrics',
    ])
      expect(Object.keys(doc.paths)).toContain(path);
    expect(Object.keys(doc.paths).some((p) => p.startsWith('/docs') || p.startsWith('/dashboard'))).toBe(
      false,
    );
    // Request bodies come from the routes' own zod schemas.
    const chatBody = doc.paths['/v1/chat/completions']?.post as {
      requestBody?: { content: Record<string, { schema: { required?: string[] } }> };
    };
    expect(chatBody.requestBody?.content['application/json']?.schema.required).toContain('messages');
  });

  it('describes every replayed response: each real answer validates against it', async () => {
    for (const request of REQUESTS()) {
      const { status, body } = await replay(request);
      expect(status, `${request.method} ${request.url}`).toBe(request.status);
      expect(
        violations(request.path, request.method, status, body),
        `${request.method} ${request.url} ${JSON.stringify(body).slice(0, 300)}`,
      ).toEqual([]);
    }
  });

  it('describes the provider keys and the operator credential routes by their fields, with no secret', () => {
    interface JsonSchema {
      properties?: Record<string, JsonSchema>;
      items?: JsonSchema;
    }
    /** The property names of the 200 body's schema, or of the one `at` leads to (`[]`: an array's items). */
    const fields = (path: string, method: string, at: string[] = []) => {
      let schema = schemaFor(path, method, 200) as JsonSchema | undefined;
      for (const step of at) schema = step === '[]' ? schema?.items : schema?.properties?.[step];
      return Object.keys(schema?.properties ?? {}).sort();
    };
    const providerKey = ['created_at', 'id', 'last4', 'name', 'object', 'provider', 'sub_account_id'];
    expect(fields('/v1/provider-keys', 'POST')).toEqual(providerKey);
    expect(fields('/v1/provider-keys', 'GET')).toEqual(['data', 'object']);
    expect(fields('/v1/provider-keys', 'GET', ['data', '[]'])).toEqual(providerKey);
    expect(fields('/v1/provider-keys/{id}', 'DELETE')).toEqual(['deleted', 'id', 'object']);

    const credential = [
      'last4',
      'limit',
      'limits',
      'message',
      'name',
      'reason',
      'since',
      'source',
      'state',
      'until',
      'weight',
    ];
    const pools = '/admin/providers/credentials';
    const pool = '/admin/providers/{provider}/credentials';
    const one = `${pool}/{name}`;
    expect(fields(pools, 'GET')).toEqual(['data', 'object']);
    expect(fields(pools, 'GET', ['data', '[]'])).toEqual(['credentials', 'provider']);
    expect(fields(pools, 'GET', ['data', '[]', 'credentials', '[]'])).toEqual(credential);
    expect(fields(pool, 'GET', ['credentials', '[]'])).toEqual(credential);
    for (const [path, method] of [
      [pool, 'POST'],
      [one, 'PATCH'],
      [one, 'POST'],
    ] as const) {
      expect(fields(path, method), `${method} ${path}`).toEqual(['credential', 'provider']);
      expect(fields(path, method, ['credential'])).toEqual(credential);
      expect(fields(path, method, ['credential', 'limits'])).toEqual(['monthly_spend_cents', 'rpm', 'tpm']);
    }
    expect(fields(one, 'DELETE')).toEqual(['deleted', 'name', 'object', 'provider']);
    // The request bodies take the secret (`key`, `api_key`); no answer has a field for one.
    const answers = [pools, pool, one, '/v1/provider-keys', '/v1/provider-keys/{id}'].flatMap((path) =>
      Object.values(doc.paths[path] ?? {}).map((operation) => operation.responses),
    );
    expect(answers).toHaveLength(9);
    expect(JSON.stringify(answers)).not.toMatch(/"(?:key|api_key|secret)":/);
  });

  it('refuses answers of the wrong shape', async () => {
    const { body } = await replay(REQUESTS()[0] as Replayed);
    const completion = body as { created: unknown; choices: { message: Record<string, unknown> }[] };
    expect(violations('/v1/chat/completions', 'POST', 200, completion)).toEqual([]);
    const withoutContent = structuredClone(completion);
    delete withoutContent.choices[0]?.message.content;
    expect(violations('/v1/chat/completions', 'POST', 200, withoutContent)).not.toEqual([]);
    expect(
      violations('/v1/chat/completions', 'POST', 200, { ...completion, created: '2026-01-01' }),
    ).not.toEqual([]);
    expect(violations('/v1/chat/completions', 'POST', 200, { ...completion, choices: [] })).not.toEqual([]);
    expect(violations('/v1/balance', 'GET', 200, { cents: 1.5, usd: 0.015 })).not.toEqual([]);
    expect(violations('/v1/balance', 'GET', 401, { error: { message: 'x', code: 401 } })).not.toEqual([]);
    expect(
      violations('/admin/accounts', 'GET', 200, { object: 'list', data: [{ account_id: 'a' }] }),
    ).not.toEqual([]);
  });
});

describe('reference UI', () => {
  it('is served at /docs from the package, with no asset from elsewhere', async () => {
    const page = await fetch(`${gateway.url}/docs/`);
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain('swagger-ui');
    const assets = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1] as string);
    expect(assets.length).toBeGreaterThan(0);
    for (const asset of assets) {
      expect(asset, 'an asset from another host').not.toMatch(/^(?:https?:)?\/\//);
      const url = new URL(asset, `${gateway.url}/docs/`);
      expect((await fetch(url)).status, asset).toBe(200);
    }
    const init = await fetch(`${gateway.url}/docs/static/swagger-initializer.js`);
    expect(init.status).toBe(200);
    expect(init.headers.get('content-security-policy')).toContain("script-src 'self';");
  });
});
