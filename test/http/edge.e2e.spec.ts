import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FilesWorld, startFilesWorld } from '../batches/support.ts';
import { json } from '../support/json.ts';
import { frame, parseResponse, rawRequest } from '../support/raw-http.ts';

// The HTTP edge as odd clients meet it: the Python SDK's body-less calls, bodies past the limit, framework and
// socket-level errors, slow clients, uploads past a limit or a quota, and the modes of stored blobs.
let world: FilesWorld;
let url: string;
const auth = () => ({ authorization: `Bearer ${world.key}` });

const MAX_BODY = 64 * 1024;
const MAX_FILE = 4096;
const QUOTA = 6000;

beforeAll(async () => {
  world = await startFilesWorld({
    GATEWAY_MAX_BODY_BYTES: String(MAX_BODY),
    GATEWAY_MAX_FILE_BYTES: String(MAX_FILE),
    GATEWAY_STORAGE_QUOTA_BYTES: String(QUOTA),
    GATEWAY_BODY_TIMEOUT_MS: '1000',
    GATEWAY_HEADERS_TIMEOUT_MS: '1000',
  });
  url = world.gateway.url;
});
afterAll(async () => world?.close());

const errorShape = (status: number) => ({
  error: { message: expect.any(String), type: 'invalid_request_error', param: null, code: status },
});

/** The headers the openai Python SDK (httpx) sends on a call without a body: JSON content type, no body. */
const pythonSdk = (method: 'DELETE' | 'POST', path: string) =>
  rawRequest(
    url,
    frame(method, path, {
      accept: 'application/json',
      'content-type': 'application/json',
      'user-agent': 'OpenAI/Python 1.99.9',
      'x-stainless-lang': 'python',
      ...auth(),
      // httpx sends a zero length on POST and no length at all on DELETE.
      ...(method === 'POST' ? { 'content-length': '0' } : {}),
      connection: 'close',
    }),
  );

describe('an empty body with Content-Type: application/json, as the Python SDK sends it', () => {
  it('is no body on DELETE and body-less POST routes', async () => {
    const file = await world.upload('{"custom_id":"a"}\n');
    const sub = await json(
      await fetch(`${url}/v1/sub-accounts`, {
        method: 'POST',
        headers: { ...auth(), 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'py', spend_cap_cents: 100 }),
      }),
    );
    const answers = {
      file: await pythonSdk('DELETE', `/v1/files/${file.id}`),
      subAccount: await pythonSdk('DELETE', `/v1/sub-accounts/${sub.id}`),
      rotate: await pythonSdk('POST', '/v1/webhook-secret/rotate'),
      batch: await pythonSdk('POST', '/v1/batches/batch_unknown/cancel'),
      job: await pythonSdk('DELETE', '/v1/jobs/job_unknown'),
    };
    const statuses = Object.fromEntries(Object.entries(answers).map(([name, r]) => [name, r.status]));
    expect(statuses).toEqual({ file: 200, subAccount: 200, rotate: 200, batch: 404, job: 404 });
    expect(JSON.parse(answers.file.body)).toEqual({ id: file.id, object: 'file', deleted: true });
    expect(JSON.parse(answers.batch.body)).toMatchObject({ error: { type: 'not_found_error', code: 404 } });
  });

  it('is a 400 saying so on a route that needs a body', async () => {
    const response = await fetch(`${url}/v1/chat/completions`, {
      method: 'POST',
      headers: { ...auth(), 'content-type': 'application/json' },
    });
    expect(response.status).toBe(400);
    expect(await json(response)).toEqual(errorShape(400));
  });
});

describe('Content-Type', () => {
  it.each([
    ['an odd type', { 'content-type': 'text/html' }, "Unsupported Content-Type 'text/html'"],
    ['an empty type', { 'content-type': '' }, 'Unsupported Content-Type'],
    ['no type', {}, 'Missing Content-Type'],
  ])('with %s on a body is a 415 in the error shape', async (_, headers, start) => {
    const body = '{"model":"openai/gpt-4o-mini","messages":[]}';
    const response = await rawRequest(
      url,
      frame(
        'POST',
        '/v1/chat/completions',
        { ...auth(), ...headers, 'content-length': String(body.length), connection: 'close' },
        body,
      ),
    );
    expect(response.status).toBe(415);
    const error = JSON.parse(response.body);
    expect(error).toEqual(errorShape(415));
    expect(error.error.message.startsWith(start)).toBe(true);
    expect(error.error.message).toMatch(/send application\/json/);
  });
});

describe('errors the HTTP framework and the socket answer', () => {
  it('answers a long path parameter (414) and a bad URL encoding (400) in the error shape', async () => {
    const long = await fetch(`${url}/v1/files/${'a'.repeat(300)}`, { headers: auth() });
    expect(long.status).toBe(414);
    expect(await json(long)).toEqual(errorShape(414));
    const encoding = await fetch(`${url}/v1/files/%E0%A4%A`, { headers: auth() });
    expect(encoding.status).toBe(400);
    expect(await json(encoding)).toEqual(errorShape(400));
  });

  it.each([
    ['a Content-Length that is not a number', { 'content-length': 'abc' }, '{}'],
    ['a Content-Length shorter than the body', { 'content-length': '2' }, '{}GARBAGE / HTTP/1.1\r\n\r\n'],
    [
      'both a length and chunked encoding',
      { 'content-length': '5', 'transfer-encoding': 'chunked' },
      '0\r\n\r\n',
    ],
    ['a Content-Length longer than the body', { 'content-length': '100' }, '{'],
  ])('answers %s with valid HTTP responses in the error shape', async (_, headers, body) => {
    const admin = { authorization: `Bearer ${world.gateway.adminToken}` };
    const request = frame(
      'POST',
      '/admin/accounts',
      { ...admin, 'content-type': 'application/json', ...headers },
      body,
    );
    const response = await rawRequest(url, request, { waitMs: 3000, end: true });
    expect(response.closed).toBe(true);
    // Every response on the connection (a short length leaves the rest to be read as a second request).
    const responses = response.raw.split(/(?=HTTP\/1\.1 )/);
    expect(responses.length).toBeGreaterThan(0);
    for (const each of responses) {
      const parsed = parseResponse(each);
      expect(parsed.status).toBe(400);
      expect(JSON.parse(parsed.body)).toEqual(errorShape(400));
    }
  });

  it('answers headers past the size limit with 431 in the error shape', async () => {
    const response = await rawRequest(url, frame('GET', '/v1/balance', { 'x-big': 'a'.repeat(20_000) }));
    expect(response.status).toBe(431);
    expect(JSON.parse(response.body)).toEqual(errorShape(431));
  });
});

describe('slow and oversized clients', () => {
  it('answers an unauthenticated request with a body at once and closes without reading the rest', async () => {
    const response = await rawRequest(
      url,
      frame(
        'POST',
        '/v1/chat/completions',
        { 'content-type': 'application/json', 'content-length': '100000' },
        '{',
      ),
      { drip: { bytes: 'a', everyMs: 50 }, waitMs: 4000 },
    );
    expect(response.status).toBe(401);
    expect(response.headers.connection).toBe('close');
    expect(response.closed).toBe(true);
    expect(response.ms).toBeLessThan(2000);
  });

  it('cuts a dripping JSON body at the body timeout with a 408', async () => {
    const response = await rawRequest(
      url,
      frame(
        'POST',
        '/v1/chat/completions',
        { ...auth(), 'content-type': 'application/json', 'content-length': '1000' },
        '{',
      ),
      { drip: { bytes: ' ', everyMs: 100 }, waitMs: 6000 },
    );
    expect(response.status).toBe(408);
    expect(JSON.parse(response.body)).toEqual(errorShape(408));
    expect(response.closed).toBe(true);
    expect(response.ms).toBeLessThan(3500);
  });

  it('closes a connection whose headers drip, past the headers timeout, with a 408', async () => {
    const response = await rawRequest(url, 'GET /v1/balance HTTP/1.1\r\nHost: x\r\n', {
      drip: { bytes: 'x-slow: 1\r\n', everyMs: 200 },
      waitMs: 6000,
    });
    expect(response.closed).toBe(true);
    expect(response.status).toBe(408);
    expect(JSON.parse(response.body)).toEqual(errorShape(408));
    expect(response.ms).toBeLessThan(3500);
  });

  it('refuses a JSON body past the limit from its Content-Length, before reading it', async () => {
    const response = await rawRequest(
      url,
      frame('POST', '/v1/chat/completions', {
        ...auth(),
        'content-type': 'application/json',
        'content-length': String(MAX_BODY + 1),
      }),
    );
    expect(response.status).toBe(413);
    expect(JSON.parse(response.body)).toEqual({
      error: { message: 'Request body is too large', type: 'invalid_request_error', param: null, code: 413 },
    });
    expect(response.closed).toBe(true);
  });

  it('refuses a chunked JSON body once it passes the limit', async () => {
    const response = await fetch(`${url}/v1/chat/completions`, {
      method: 'POST',
      headers: { ...auth(), 'content-type': 'application/json' },
      body: new Blob([`{"x":"${'a'.repeat(MAX_BODY)}"}`]).stream(),
      duplex: 'half',
    } as RequestInit);
    expect(response.status).toBe(413);
    expect(await json(response)).toEqual(errorShape(413));
  });
});

describe('multipart bodies', () => {
  const nameless = {
    field: 'Content-Disposition: form-data\r\n\r\nbatch',
    file: 'Content-Disposition: form-data; filename="a.png"\r\nContent-Type: image/png\r\n\r\nPNG',
  };
  it.each(
    ['/v1/files', '/v1/images/edits', '/v1/audio/transcriptions'].flatMap((path) =>
      Object.entries(nameless).map(([kind, part]) => [path, kind, part] as const),
    ),
  )('on %s, a %s part without a name is a 400 saying so', async (path, _, part) => {
    const response = await fetch(`${url}${path}`, {
      method: 'POST',
      headers: { ...auth(), 'content-type': 'multipart/form-data; boundary=XX' },
      body: `--XX\r\n${part}\r\n--XX--\r\n`,
    });
    expect(response.status).toBe(400);
    const body = await json(response);
    expect(body).toEqual(errorShape(400));
    expect(body.error.message).toMatch(/a part without a name/);
  });

  it.each(['/v1/chat/completions', '/v1/sub-accounts', '/admin/accounts'])(
    'on %s, a route that takes no files, is a 415 in the error shape',
    async (path) => {
      const form = new FormData();
      form.append('model', 'local/echo');
      form.append('messages', '[]');
      const headers = path.startsWith('/admin')
        ? { authorization: `Bearer ${world.gateway.adminToken}` }
        : auth();
      const response = await fetch(`${url}${path}`, { method: 'POST', headers, body: form });
      expect(response.status).toBe(415);
      const body = await json(response);
      expect(body).toEqual(errorShape(415));
      expect(body.error.message).toMatch(
        /^Unsupported Content-Type 'multipart\/form-data; boundary=.*send application\/json/,
      );
    },
  );
});

describe('uploads', () => {
  it('refuses an upload whose Content-Length is past the limit before reading it', async () => {
    const response = await rawRequest(
      url,
      frame('POST', '/v1/files', {
        ...auth(),
        'content-type': 'multipart/form-data; boundary=x',
        'content-length': String(50 * 1024 * 1024),
      }),
    );
    expect(response.status).toBe(413);
    expect(JSON.parse(response.body).error.message).toMatch(/^'file': larger than the limit of 4096 bytes/);
    expect(response.closed).toBe(true);
    expect(response.ms).toBeLessThan(2000);
  });

  it('stores blobs readable by the gateway alone (0600 files in 0700 directories)', async () => {
    const file = await world.upload('{"custom_id":"mode"}\n');
    const blobs = join(world.gateway.env.GATEWAY_DATA_DIR as string, 'blobs');
    expect(((await stat(join(blobs, 'files', file.id))).mode & 0o777).toString(8)).toBe('600');
    expect(((await stat(join(blobs, 'files'))).mode & 0o777).toString(8)).toBe('700');
    expect(((await stat(blobs)).mode & 0o777).toString(8)).toBe('700');
    await world.client.files.delete(file.id);
  });

  it('refuses an upload past the account storage quota with a 413 saying so', async () => {
    const owner = world.clientFor(
      (await json(await world.gateway.admin(`/accounts/${world.accountId}/keys`))).key as string,
    );
    const existing = await owner.files.list();
    for (const f of existing.data) await owner.files.delete(f.id);
    const kept = await world.upload('x'.repeat(4000));
    const form = new FormData();
    form.append('purpose', 'batch');
    form.append('file', new Blob(['y'.repeat(3000)]), 'more.jsonl');
    const response = await fetch(`${url}/v1/files`, { method: 'POST', headers: auth(), body: form });
    expect(response.status).toBe(413);
    const body = await json(response);
    expect(body).toEqual(errorShape(413));
    expect(body.error.message).toMatch(/^Storage quota exceeded: the account keeps 4000 bytes/);
    await world.client.files.delete(kept.id);
    const fits = new FormData();
    fits.append('purpose', 'batch');
    fits.append('file', new Blob(['y'.repeat(3000)]), 'more.jsonl');
    const after = await fetch(`${url}/v1/files`, { method: 'POST', headers: auth(), body: fits });
    expect(after.status).toBe(200);
  });
});
