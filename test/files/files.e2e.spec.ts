import { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FilesWorld, startFilesWorld } from '../batches/support.ts';
import { json } from '../support/json.ts';

describe('Files API through the openai SDK', () => {
  let world: FilesWorld;
  beforeAll(async () => {
    world = await startFilesWorld({ GATEWAY_MAX_FILE_BYTES: '4096' });
  });
  afterAll(async () => world?.close());

  it('uploads, lists newest first, retrieves, streams the bytes back and deletes', async () => {
    const text = '{"custom_id":"a"}\n{"custom_id":"b"}\n';
    const first = await world.upload(text);
    expect(first).toMatchObject({
      object: 'file',
      bytes: Buffer.byteLength(text),
      filename: 'input.jsonl',
      purpose: 'batch',
    });
    expect(first.id).toMatch(/^file-[0-9a-f]{24}$/);
    expect(first.created_at).toBeTypeOf('number');
    const second = await world.client.files.create({
      file: await toFile(Buffer.from('notes'), 'notes.txt'),
      purpose: 'assistants',
    });

    expect((await world.client.files.retrieve(first.id)).id).toBe(first.id);
    const listed = await world.client.files.list();
    expect(listed.data.map((f) => f.id).slice(0, 2)).toEqual([second.id, first.id]);
    const onlyBatch = await world.client.files.list({ purpose: 'batch' });
    expect(onlyBatch.data.map((f) => f.id)).toEqual([first.id]);
    const page = await json(
      await fetch(`${world.gateway.url}/v1/files?limit=1`, {
        headers: { authorization: `Bearer ${world.key}` },
      }),
    );
    expect(page).toMatchObject({ object: 'list', has_more: true, first_id: second.id });
    const after = await json(
      await fetch(`${world.gateway.url}/v1/files?limit=1&after=${second.id}`, {
        headers: { authorization: `Bearer ${world.key}` },
      }),
    );
    expect(after.data.map((f: { id: string }) => f.id)).toEqual([first.id]);

    const content = await world.client.files.content(first.id);
    expect(await content.text()).toBe(text);

    expect(await world.client.files.delete(first.id)).toEqual({
      id: first.id,
      object: 'file',
      deleted: true,
    });
    await expect(world.client.files.retrieve(first.id)).rejects.toMatchObject({ status: 404 });
    await expect(world.client.files.content(first.id)).rejects.toMatchObject({ status: 404 });
    expect((await world.client.files.list()).data.map((f) => f.id)).not.toContain(first.id);
  });

  it('walks the list oldest first with order=asc, page after page, as the SDK pages it', async () => {
    for (let i = 0; i < 5; i++) await world.upload(`{"custom_id":"walk-${i}"}\n`);
    const walk = async (order: 'asc' | 'desc') => {
      const ids: string[] = [];
      for await (const file of world.client.files.list({ order, limit: 2 })) ids.push(file.id);
      return ids;
    };
    const oldest = await walk('asc');
    const newest = await walk('desc');
    expect(new Set(oldest).size).toBe(oldest.length);
    expect(oldest.length).toBeGreaterThanOrEqual(5);
    expect(oldest).toEqual([...newest].reverse());
  });

  it('refuses a file past the configured limit with a 413 naming the file', async () => {
    const response = await upload(world, Buffer.alloc(5000, 'x'), 'batch');
    expect(response.status).toBe(413);
    const body = await json(response);
    expect(body.error).toMatchObject({ type: 'invalid_request_error', code: 413 });
    expect(body.error.message).toMatch(/^'file': larger than the limit of 4096 bytes/);
  });

  it('refuses a missing file, an unknown purpose and a non-multipart body in the error shape', async () => {
    const noPurpose = await upload(world, Buffer.from('x'), 'training');
    expect(noPurpose.status).toBe(400);
    expect((await json(noPurpose)).error.message).toMatch(
      /^'purpose': one of batch, batch_output, fine-tune, assistants, user_data, vision, evals/,
    );

    const form = new FormData();
    form.append('purpose', 'batch');
    const noFile = await fetch(`${world.gateway.url}/v1/files`, {
      method: 'POST',
      headers: { authorization: `Bearer ${world.key}` },
      body: form,
    });
    expect(noFile.status).toBe(400);
    expect((await json(noFile)).error).toMatchObject({ type: 'invalid_request_error', code: 400 });

    const asJson = await fetch(`${world.gateway.url}/v1/files`, {
      method: 'POST',
      headers: { authorization: `Bearer ${world.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ purpose: 'batch' }),
    });
    expect(asJson.status).toBe(400);
    expect((await json(asJson)).error.message).toMatch(/^'file':/);

    // Bodies the multipart parser cannot read are the client's 400, not the gateway's 500.
    for (const [contentType, body] of [
      ['multipart/form-data; boundary=x', '--x\r\nContent-Disposition: form-data; name="a"\r\n\r\nb\r\n'],
      ['multipart/form-data', 'abc'],
    ]) {
      const malformed = await fetch(`${world.gateway.url}/v1/files`, {
        method: 'POST',
        headers: { authorization: `Bearer ${world.key}`, 'content-type': contentType as string },
        body,
      });
      expect(malformed.status, contentType).toBe(400);
      expect((await json(malformed)).error.message).toMatch(/^multipart body: /);
    }
  });

  it("keeps a sub-account's files apart: another scope's file is a 404", async () => {
    const sub = await json(
      await fetch(`${world.gateway.url}/v1/sub-accounts`, {
        method: 'POST',
        headers: { authorization: `Bearer ${world.key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'customer', spend_cap_cents: 500 }),
      }),
    );
    const subClient = world.clientFor(sub.key);
    const mine = await world.upload('{"x":1}\n');
    const theirs = await world.upload('{"y":1}\n', subClient);

    await expect(subClient.files.retrieve(mine.id)).rejects.toMatchObject({ status: 404 });
    await expect(subClient.files.content(mine.id)).rejects.toMatchObject({ status: 404 });
    await expect(subClient.files.delete(mine.id)).rejects.toMatchObject({ status: 404 });
    await expect(world.client.files.retrieve(theirs.id)).rejects.toMatchObject({ status: 404 });
    expect((await subClient.files.list()).data.map((f) => f.id)).toEqual([theirs.id]);
    expect((await world.client.files.list()).data.map((f) => f.id)).not.toContain(theirs.id);

    const other = await json(await world.gateway.admin('/accounts', { name: 'other' }));
    const stranger = world.clientFor(other.key);
    await expect(stranger.files.retrieve(mine.id)).rejects.toMatchObject({ status: 404 });
    expect((await stranger.files.list()).data).toEqual([]);
    // Still there for its owner.
    expect((await world.client.files.retrieve(mine.id)).id).toBe(mine.id);
  });
});

function upload(world: FilesWorld, bytes: Buffer, purpose: string): Promise<Response> {
  const form = new FormData();
  form.append('purpose', purpose);
  form.append('file', new Blob([bytes]), 'big.jsonl');
  return fetch(`${world.gateway.url}/v1/files`, {
    method: 'POST',
    headers: { authorization: `Bearer ${world.key}` },
    body: form,
  });
}
