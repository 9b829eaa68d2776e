import { readFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SdkWorld, startSdkWorld } from '../python/world.ts';
import { json } from '../support/json.ts';

/**
 * The requests the official Python SDKs send on body-less calls, as test/python/capture_requests.py recorded them
 * (method, path, every header in its order and case, the empty body), replayed byte for byte with the ids and
 * the key of this test put in: `Content-Type: application/json` with no body, which must read as no body.
 */
interface Captured {
  call: string;
  sdk: string;
  method: string;
  path: string;
  headers: [string, string][];
  body: string;
}

const captured: Captured[] = JSON.parse(
  readFileSync(new URL('../python/sdk-requests.json', import.meta.url), 'utf8'),
);

let world: SdkWorld;
beforeAll(async () => {
  world = await startSdkWorld();
});
afterAll(async () => world?.close());

interface Answer {
  status: number;
  headers: Record<string, string>;
  body: unknown;
}

/**
 * Sends the request with exactly the captured headers, in their order and case (Node's client adds none when it is
 * given the raw list), and reads the answer, gunzipped when the gateway compressed it.
 */
function send(captured: Captured, ids: Record<string, string>): Promise<Answer> {
  const { host } = new URL(world.gateway.url);
  const fill = (text: string) =>
    text
      .replace('HOST', host)
      .replace('KEY', world.key)
      .replace(/[A-Z_]+_ID/, (name) => ids[name] ?? name);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      `${world.gateway.url}${fill(captured.path)}`,
      { method: captured.method, headers: captured.headers.flatMap(([name, value]) => [name, fill(value)]) },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          const raw = Buffer.concat(chunks);
          const encoding = res.headers['content-encoding'];
          const text = (encoding === 'gzip' ? gunzipSync(raw) : raw).toString('utf8');
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers as Record<string, string>,
            body: JSON.parse(text),
          });
        });
      },
    );
    req.on('error', reject);
    req.end(captured.body);
  });
}

const v1 = (path: string, init: { method?: string; body?: unknown } = {}) =>
  fetch(`${world.gateway.url}/v1${path}`, {
    method: init.method ?? (init.body === undefined ? 'GET' : 'POST'),
    headers: {
      authorization: `Bearer ${world.key}`,
      ...(init.body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
  });

async function upload(text: string): Promise<string> {
  const form = new FormData();
  form.append('purpose', 'batch');
  form.append('file', new Blob([text]), 'input.jsonl');
  const response = await fetch(`${world.gateway.url}/v1/files`, {
    method: 'POST',
    headers: { authorization: `Bearer ${world.key}` },
    body: form,
  });
  return (await json(response)).id;
}

const request = (call: string) => {
  const found = captured.find((c) => c.call === call);
  if (!found) throw new Error(`no captured request for ${call}`);
  return found;
};

describe('the Python SDKs’ body-less requests, byte for byte', () => {
  it('were captured with Content-Type: application/json and no body', () => {
    const bodyless = captured.filter((c) => c.sdk.startsWith('OpenAI/Python'));
    expect(bodyless.map((c) => c.call).sort()).toEqual([
      'batches.cancel',
      'files.delete',
      'jobs.delete',
      'sub_accounts.delete',
      'webhook_secret.rotate',
    ]);
    for (const c of bodyless) {
      expect(c.headers).toContainEqual(['content-type', 'application/json']);
      expect(c.body).toBe('');
    }
  });

  it('files.delete deletes the file', async () => {
    const fileId = await upload('{"custom_id":"a"}\n');
    const answer = await send(request('files.delete'), { FILE_ID: fileId });
    expect(answer).toMatchObject({ status: 200, body: { id: fileId, object: 'file', deleted: true } });
    expect((await v1(`/files/${fileId}`)).status).toBe(404);
  });

  it('batches.cancel cancels the batch', async () => {
    const line = {
      custom_id: 'a',
      method: 'POST',
      url: '/v1/chat/completions',
      body: { model: 'local/echo', messages: [{ role: 'user', content: 'x' }] },
    };
    const fileId = await upload(`${JSON.stringify(line)}\n`);
    const batch = await json(
      await v1('/batches', { body: { input_file_id: fileId, endpoint: '/v1/chat/completions' } }),
    );
    const answer = await send(request('batches.cancel'), { BATCH_ID: batch.id });
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({
      id: batch.id,
      object: 'batch',
      status: expect.stringMatching(/^cancell/),
    });
  });

  it('DELETE /v1/jobs/{id} cancels the job', async () => {
    const accepted = await json(await v1('/3d/generations', { body: { prompt: 'a statue' } }));
    const answer = await send(request('jobs.delete'), { JOB_ID: accepted.id });
    expect(answer).toMatchObject({
      status: 200,
      body: { id: accepted.id, status: 'failed', error: { type: 'cancelled' }, webhook_delivered: false },
    });
  });

  it('DELETE /v1/sub-accounts/{id} deletes the sub-account', async () => {
    const sub = await json(await v1('/sub-accounts', { body: { name: 'py', spend_cap_cents: 100 } }));
    const answer = await send(request('sub_accounts.delete'), { SUB_ACCOUNT_ID: sub.id });
    expect(answer).toMatchObject({ status: 200, body: { id: sub.id, deleted: true } });
  });

  it('POST /v1/webhook-secret/rotate rotates the secret', async () => {
    const before = await json(await v1('/webhook-secret'));
    const answer = await send(request('webhook_secret.rotate'), {});
    expect(answer).toMatchObject({
      status: 200,
      body: { object: 'webhook_secret', generation: before.generation + 1 },
    });
  });

  it('the Anthropic SDK’s GET /v1/models answers gzip, as its Accept-Encoding asks', async () => {
    const answer = await send(request('anthropic.models.list'), {});
    expect(answer.status).toBe(200);
    expect(answer.headers['content-encoding']).toBe('gzip');
    // The models this gateway serves (the list's default): large enough to be compressed.
    expect((answer.body as { data: unknown[] }).data.length).toBeGreaterThan(10);
  });
});

describe('Content-Type on a request with a body', () => {
  it.each([
    ['empty', ''],
    ['odd', 'application/x-www-form-urlencoded'],
    ['text', 'text/plain'],
  ])('%s: a 415 that says what to send', async (_, type) => {
    const response = await fetch(`${world.gateway.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${world.key}`, 'content-type': type },
      body: JSON.stringify({ model: 'local/echo', messages: [{ role: 'user', content: 'x' }] }),
    });
    expect(response.status).toBe(415);
    expect((await json(response)).error).toMatchObject({
      type: 'invalid_request_error',
      code: 415,
      message: expect.stringMatching(/send application\/json/),
    });
  });
});
