import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FilesWorld, startFilesWorld } from '../batches/support.ts';
import { json } from '../support/json.ts';
import { frame, rawRequest } from '../support/raw-http.ts';

// Strings PostgreSQL cannot store (U+0000 anywhere; an unpaired surrogate in JSON) used to reach an append and
// come back as 500s. Each is now a 400 naming the field, whatever the route.
let world: FilesWorld;
let url: string;
const auth = () => ({ authorization: `Bearer ${world.key}` });
const admin = () => ({ authorization: `Bearer ${world.gateway.adminToken}` });

beforeAll(async () => {
  world = await startFilesWorld();
  url = world.gateway.url;
});
afterAll(async () => world?.close());

const post = (path: string, body: unknown, headers: Record<string, string>) =>
  fetch(`${url}${path}`, {
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/json' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });

const expectRefused = async (response: Response, field: string) => {
  const body = await json(response);
  expect({ status: response.status, body }).toEqual({
    status: 400,
    body: {
      error: {
        message: `Invalid body: '${field}': contains a NUL character or an unpaired surrogate`,
        type: 'invalid_request_error',
        param: field,
        code: 400,
      },
    },
  });
};

describe.each([
  ['a NUL alone', '\u0000'],
  ['a NUL inside', 'a\u0000b'],
  ['a lone surrogate', '\ud800'],
])('a string holding %s', (_, bad) => {
  it('is a 400 naming the field on every JSON route', async () => {
    await expectRefused(await post('/v1/sub-accounts', { name: bad, spend_cap_cents: 10 }, auth()), 'name');
    await expectRefused(await post('/v1/budgets', { tag: bad, cap_cents: 10 }, auth()), 'tag');
    await expectRefused(await post('/admin/accounts', { name: bad }, admin()), 'name');
    await expectRefused(
      await post(`/admin/accounts/${world.accountId}/top-ups`, { cents: 1, reference: bad }, admin()),
      'reference',
    );
    await expectRefused(await post('/v1/audio/music', { prompt: bad }, auth()), 'prompt');
    await expectRefused(
      await post(
        '/v1/chat/completions',
        { model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: `hi ${bad}` }] },
        auth(),
      ),
      'messages.0.content',
    );
  });

  it('is a 400 in a key, a query parameter or a path parameter', async () => {
    const inKey = await post('/v1/chat/completions', { metadata: { [`k${bad}`]: 'v' } }, auth());
    expect(inKey.status).toBe(400);
    expect((await json(inKey)).error.message).toBe(
      "Invalid body: 'metadata': a key contains a NUL character or an unpaired surrogate",
    );
    // Percent-decoding yields UTF-8 only: a URL can carry a NUL but not a lone surrogate (that decodes to U+FFFD).
    const encoded = bad === '\ud800' ? '%ED%A0%80' : encodeURIComponent(bad);
    const query = await fetch(`${url}/v1/files?after=${encoded}`, { headers: auth() });
    const path = await fetch(`${url}/v1/files/file-${encoded}`, { headers: auth() });
    if (!bad.includes('\u0000')) {
      expect(query.status).toBe(200);
      expect(await json(path)).toEqual({
        error: {
          message: 'The URL is not validly percent-encoded',
          type: 'invalid_request_error',
          param: null,
          code: 400,
        },
      });
      return;
    }
    expect(await json(query)).toEqual({
      error: {
        message: "Invalid querystring: 'after': contains a NUL character or an unpaired surrogate",
        type: 'invalid_request_error',
        param: 'after',
        code: 400,
      },
    });
    expect(await json(path)).toEqual({
      error: {
        message: "Invalid params: 'id': contains a NUL character or an unpaired surrogate",
        type: 'invalid_request_error',
        param: 'id',
        code: 400,
      },
    });
  });

  // FormData sends well-formed UTF-8 only (a lone surrogate becomes U+FFFD), so multipart is tried with NUL.
  it.skipIf(bad === '\ud800')('is a 400 in a multipart text field or file name', async () => {
    const field = new FormData();
    field.append('purpose', `batch${bad}`);
    field.append('file', new Blob(['{}\n']), 'in.jsonl');
    const byField = await fetch(`${url}/v1/files`, { method: 'POST', headers: auth(), body: field });
    expect(byField.status).toBe(400);
    expect((await json(byField)).error.message).toBe(
      "'purpose': contains a NUL character or an unpaired surrogate",
    );
    const named = new FormData();
    named.append('purpose', 'batch');
    named.append('file', new Blob(['{}\n']), `in${bad}.jsonl`);
    const byName = await fetch(`${url}/v1/files`, { method: 'POST', headers: auth(), body: named });
    expect(byName.status).toBe(400);
    expect((await json(byName)).error.message).toBe(
      "'file': the file name contains a NUL character or an unpaired surrogate",
    );
  });
});

describe('JSON bodies', () => {
  it('refuses prototype keys instead of merging them', async () => {
    for (const body of [
      '{"name":"p","__proto__":{"polluted":true}}',
      '{"name":"p","constructor":{"prototype":{"polluted":true}}}',
    ]) {
      const response = await post('/admin/accounts', body, admin());
      expect(response.status).toBe(400);
      expect((await json(response)).error.message).toMatch(/^Invalid body: '(__proto__|constructor)': /);
    }
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('takes the last of duplicate keys, as JSON.parse does', async () => {
    const response = await post('/admin/accounts', '{"name":"first","name":"second"}', admin());
    expect(response.status).toBe(200);
  });

  it('refuses nesting deeper than 64 levels with a 400', async () => {
    const deep = `{"model":"openai/gpt-4o-mini","metadata":${'['.repeat(5000)}${']'.repeat(5000)}}`;
    const response = await post('/v1/chat/completions', deep, auth());
    expect(response.status).toBe(400);
    expect((await json(response)).error.message).toMatch(/nested deeper than 64 levels$/);
  });

  it('refuses a body that is not valid UTF-8 instead of replacing its bytes', async () => {
    const bytes = Buffer.concat([Buffer.from('{"name":"caf'), Buffer.from([0xe9]), Buffer.from('"}')]);
    const response = await rawRequest(
      url,
      Buffer.concat([
        Buffer.from(
          frame('POST', '/admin/accounts', {
            ...admin(),
            'content-type': 'application/json',
            'content-length': String(bytes.length),
            connection: 'close',
          }),
        ),
        bytes,
      ]),
    );
    expect(response.status).toBe(400);
    expect(JSON.parse(response.body)).toEqual({
      error: {
        message: 'Malformed JSON body: the body is not valid UTF-8',
        type: 'invalid_request_error',
        param: null,
        code: 400,
      },
    });
  });
});
