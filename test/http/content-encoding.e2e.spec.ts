import { randomBytes } from 'node:crypto';
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';
import { json } from '../support/json.ts';
import { rawRequest } from '../support/raw-http.ts';

// A body's Content-Encoding: a JSON body is decoded within its size limit; a multipart upload is refused at once
// with 415 (it used to wait out the whole request deadline, then answer 408; a small one lost its file part).

let gateway: TestGateway;
let key: string;

const BOUNDARY = 'gw-encoded-upload';

/** A multipart/form-data body as an SDK sends it: text fields, then one file part. */
function multipart(fields: Record<string, string>, file: { field: string; name: string; bytes: Buffer }) {
  const parts = Object.entries(fields).map(
    ([name, value]) => `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`,
  );
  return Buffer.concat([
    Buffer.from(
      `${parts.join('')}--${BOUNDARY}\r\nContent-Disposition: form-data; name="${file.field}"; filename="${file.name}"\r\n` +
        'Content-Type: application/octet-stream\r\n\r\n',
    ),
    file.bytes,
    Buffer.from(`\r\n--${BOUNDARY}--\r\n`),
  ]);
}

function head(path: string, headers: Record<string, string | number>): string {
  const lines = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`);
  return `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nAuthorization: Bearer ${key}\r\n${lines.join('')}\r\n`;
}

const upload = (path: string, body: Buffer, encoding: string) =>
  head(path, {
    'Content-Type': `multipart/form-data; boundary=${BOUNDARY}`,
    'Content-Encoding': encoding,
    'Content-Length': body.length,
  });

beforeAll(async () => {
  // A short request deadline, so that an upload left waiting shows as a 408 here rather than a hung test.
  gateway = await startTestGateway({ GATEWAY_REQUEST_TIMEOUT_MS: '20000' });
  const account = await json(await gateway.admin('/accounts', { name: 'Encoded' }));
  key = account.key;
  await gateway.admin(`/accounts/${account.account_id}/top-ups`, { cents: 100, reference: 'p' });
});
afterAll(async () => {
  await gateway?.close();
});

describe('an encoded multipart upload', () => {
  const twoMegabytes = gzipSync(
    multipart(
      { purpose: 'batch' },
      { field: 'file', name: 'lines.jsonl', bytes: randomBytes(2 * 1024 * 1024) },
    ),
  );

  it('is refused with 415 naming Content-Encoding, the whole 2 MB sent', async () => {
    const request = Buffer.concat([Buffer.from(upload('/v1/files', twoMegabytes, 'gzip')), twoMegabytes]);
    const answer = await rawRequest(gateway.url, request, { waitMs: 60_000 });
    expect(answer.status).toBe(415);
    expect(JSON.parse(answer.body)).toEqual({
      error: {
        message: expect.stringMatching(/^'content-encoding': a multipart\/form-data upload is not decoded/),
        type: 'invalid_request_error',
        param: 'content-encoding',
        code: 415,
      },
    });
    expect(answer.headers.connection).toBe('close');
  });

  it('is refused before its body is read: the answer comes with most of it never sent', async () => {
    for (const path of ['/v1/files', '/v1/audio/transcriptions']) {
      const request = Buffer.concat([
        Buffer.from(upload(path, twoMegabytes, 'gzip')),
        twoMegabytes.subarray(0, 64 * 1024),
      ]);
      const answer = await rawRequest(gateway.url, request, { waitMs: 60_000 });
      expect(answer.status, path).toBe(415);
      expect(answer.closed, path).toBe(true);
      expect(JSON.parse(answer.body).error.message, path).toContain("'content-encoding'");
    }
  });

  it('is refused whatever its size or encoding, rather than read as an upload without its file', async () => {
    const small = multipart(
      { model: 'openai/whisper-1' },
      { field: 'file', name: 'a.wav', bytes: randomBytes(2048) },
    );
    for (const [encoding, body] of [
      ['gzip', gzipSync(small)],
      ['br', small],
      ['GZIP', gzipSync(small)],
    ] as const) {
      const answer = await rawRequest(
        gateway.url,
        Buffer.concat([Buffer.from(upload('/v1/audio/transcriptions', body, encoding)), body]),
        { waitMs: 60_000 },
      );
      expect(answer.status, encoding).toBe(415);
      expect(JSON.parse(answer.body).error.param, encoding).toBe('content-encoding');
    }
  });

  it('is taken when its Content-Encoding is identity', async () => {
    const body = multipart(
      { purpose: 'batch' },
      { field: 'file', name: 'lines.jsonl', bytes: Buffer.from('{}\n') },
    );
    const answer = await rawRequest(
      gateway.url,
      Buffer.concat([Buffer.from(upload('/v1/files', body, 'identity')), body]),
      { waitMs: 60_000 },
    );
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.body)).toMatchObject({ object: 'file', purpose: 'batch', bytes: 3 });
  });
});

describe('a JSON body with a Content-Encoding', () => {
  const post = (body: Buffer, encoding: string) =>
    fetch(`${gateway.url}/v1/chat/completions`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${key}`,
        'content-type': 'application/json',
        'content-encoding': encoding,
      },
      body,
    });
  const chat = Buffer.from(
    JSON.stringify({ model: 'local/echo', messages: [{ role: 'user', content: 'decoded' }], max_tokens: 5 }),
  );

  it('is decoded when gzip, deflate or br', async () => {
    for (const [encoding, body] of [
      ['gzip', gzipSync(chat)],
      ['deflate', deflateSync(chat)],
      ['br', brotliCompressSync(chat)],
    ] as const) {
      const answer = await post(body, encoding);
      expect(answer.status, encoding).toBe(200);
      expect((await json(answer)).choices[0].message.content, encoding).toContain('decoded');
    }
  });

  it('is refused with 415 naming Content-Encoding when the encoding is not one of them', async () => {
    const answer = await post(chat, 'compress');
    expect(answer.status).toBe(415);
    expect(await json(answer)).toEqual({
      error: {
        message: expect.stringMatching(/^'content-encoding': /),
        type: 'invalid_request_error',
        param: 'content-encoding',
        code: 415,
      },
    });
  });

  it('is a 400 naming Content-Encoding when it does not decode', async () => {
    const answer = await post(chat, 'gzip');
    expect(answer.status).toBe(400);
    const { error } = await json(answer);
    expect(error).toMatchObject({ type: 'invalid_request_error', param: 'content-encoding', code: 400 });
  });

  it('is a 413 when it decodes to more than the body limit', async () => {
    const bomb = gzipSync(Buffer.alloc(11 * 1024 * 1024, 0x20));
    expect(bomb.length).toBeLessThan(100 * 1024);
    const answer = await post(bomb, 'gzip');
    expect(answer.status).toBe(413);
    expect((await json(answer)).error.type).toBe('invalid_request_error');
  });
});
