import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { openBlobStore } from '../../src/files/open-blob-store.ts';
import { S3BlobStore } from '../../src/files/s3-blob-store.ts';
import { startTestGateway, type TestGateway } from '../support/gateway.ts';
import { json } from '../support/json.ts';
import { type S3Simulator, s3Env, startS3Simulator } from '../upstreams/s3.ts';

let s3: S3Simulator;
let store: S3BlobStore;

beforeAll(async () => {
  s3 = await startS3Simulator();
  store = openBlobStore(loadConfig(s3Env(s3, 'test/'))) as S3BlobStore;
});
afterAll(async () => {
  await s3?.close();
});

const text = async (stream: Readable) => {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString();
};

describe('S3 blob store', () => {
  it('is chosen by GATEWAY_BLOB_STORE=s3, and refused without a bucket', () => {
    expect(store).toBeInstanceOf(S3BlobStore);
    expect(() => loadConfig({ GATEWAY_BLOB_STORE: 's3' })).toThrow(/S3_BUCKET/);
  });

  it('writes, reads, sizes and removes objects under its prefix, signed with the access key', async () => {
    const stored = await store.write(
      'files/a/one.jsonl',
      Readable.from([Buffer.from('hello '), Buffer.from('world')]),
    );
    expect(stored).toEqual({
      bytes: 11,
      sha256: 'b94d27b9934d3e08a52e52d7da7dabfac484efe37a5380ee9088f7ace2efcde9',
    });
    expect(s3.objects.get('test/files/a/one.jsonl')?.toString()).toBe('hello world');
    expect(s3.requests.at(-1)?.headers.authorization).toMatch(/^AWS4-HMAC-SHA256 Credential=AKIASIMULATOR/);
    expect(await text(store.read('files/a/one.jsonl'))).toBe('hello world');
    expect(await store.size('files/a/one.jsonl')).toBe(11);
    expect(await (await store.blob('files/a/one.jsonl', 'text/plain')).text()).toBe('hello world');
    await store.remove('files/a/one.jsonl');
    expect(await store.size('files/a/one.jsonl')).toBeUndefined();
    await store.remove('files/a/one.jsonl'); // removing twice is no error
  });

  it('fails a read of a missing object as a missing file does', async () => {
    await expect(text(store.read('files/none'))).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('sends nothing for a write past its limit', async () => {
    const before = s3.requests.length;
    await expect(
      store.write('files/big', Buffer.alloc(100), { maxBytes: 10, tooLarge: () => new Error('too large') }),
    ).rejects.toThrow('too large');
    expect(s3.requests.length).toBe(before);
    expect(s3.objects.has('test/files/big')).toBe(false);
  });

  it('refuses keys that would leave its prefix', async () => {
    await expect(store.write('../escape', Buffer.from('x'))).rejects.toThrow(/invalid blob key/);
    expect(() => store.read('a/../../b')).toThrow(/invalid blob key/);
  });

  it('surfaces what the store refuses (a wrong access key)', async () => {
    const wrong = openBlobStore(loadConfig({ ...s3Env(s3), S3_ACCESS_KEY_ID: 'AKIAWRONG' }));
    await expect(wrong.write('x', Buffer.from('x'))).rejects.toMatchObject({ name: 'InvalidAccessKeyId' });
  });
});

describe('two gateway instances over one bucket', () => {
  let first: TestGateway;
  let second: TestGateway;
  beforeAll(async () => {
    first = await startTestGateway(s3Env(s3, 'shared/'));
    // Another instance over the same store and bucket, with a data directory of its own.
    second = await startTestGateway(s3Env(s3, 'shared/'), { schema: first.env.GATEWAY_DB_SCHEMA });
  });
  afterAll(async () => {
    await second?.close();
    await first?.close();
  });

  it('serves from one instance the file uploaded through the other', async () => {
    expect(second.env.GATEWAY_DATA_DIR).not.toBe(first.env.GATEWAY_DATA_DIR);
    const account = await json(await first.admin('/accounts', { name: 's3' }));
    const form = new FormData();
    form.append('purpose', 'batch');
    form.append('file', new Blob(['{"line":1}\n{"line":2}\n']), 'input.jsonl');
    const uploaded = await fetch(`${first.url}/v1/files`, {
      method: 'POST',
      headers: { authorization: `Bearer ${account.key}` },
      body: form,
    });
    expect(uploaded.status).toBe(200);
    const file = (await uploaded.json()) as { id: string; bytes: number };
    expect([...s3.objects.keys()].some((k) => k.startsWith('shared/'))).toBe(true);

    let content: Response | undefined;
    for (let i = 0; i < 50; i++) {
      content = await fetch(`${second.url}/v1/files/${file.id}/content`, {
        headers: { authorization: `Bearer ${account.key}` },
      });
      if (content.status !== 404 && content.status !== 401) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(content?.status).toBe(200);
    expect(await content?.text()).toBe('{"line":1}\n{"line":2}\n');
  });
});
