import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../support/gateway.ts';
import { json } from '../support/json.ts';
import { chatLine, type FilesWorld, jsonl, startFilesWorld, waitForStatus } from './support.ts';

describe('Batches through the openai SDK', () => {
  let world: FilesWorld;
  beforeAll(async () => {
    world = await startFilesWorld();
  });
  afterAll(async () => world?.close());

  it('runs valid lines through the gateway (the batch discount out of the fee), and puts invalid and failed lines in the error file', async () => {
    const tag = `batch-${Date.now()}`;
    const input = [
      chatLine('ok-1', 'first question'),
      chatLine('ok-2', 'second question'),
      '{not json',
      JSON.stringify({ method: 'POST', url: '/v1/chat/completions', body: {} }),
      chatLine('ok-1', 'a repeated custom id'),
      chatLine('wrong-url', 'x').replace('/v1/chat/completions', '/v1/embeddings'),
      JSON.stringify({
        custom_id: 'bad-body',
        method: 'POST',
        url: '/v1/chat/completions',
        body: { messages: [] },
      }),
      chatLine('unknown-model', 'x', { model: 'openai/no-such-model' }),
      '',
      chatLine('ok-3', 'third question'),
    ].join('\n');
    const file = await world.upload(input);
    const created = await world.client.batches.create(
      {
        input_file_id: file.id,
        endpoint: '/v1/chat/completions',
        completion_window: '24h',
        metadata: { run: 'one' },
      },
      { headers: { 'x-gw-tag': tag } },
    );
    expect(created).toMatchObject({
      object: 'batch',
      status: 'validating',
      input_file_id: file.id,
      endpoint: '/v1/chat/completions',
      completion_window: '24h',
      metadata: { run: 'one' },
      output_file_id: null,
    });
    expect(created.id).toMatch(/^batch_[0-9a-f]{24}$/);
    expect(created.expires_at).toBe(created.created_at + 24 * 3600);

    const done = await waitForStatus(world.client, created.id, (s) => s === 'completed');
    expect(done.request_counts).toEqual({ total: 9, completed: 3, failed: 6 });
    expect(done.in_progress_at).toBeTypeOf('number');
    expect(done.finalizing_at).toBeTypeOf('number');
    expect(done.completed_at).toBeTypeOf('number');

    const output = jsonl(await (await world.client.files.content(done.output_file_id as string)).text());
    expect(output.map((line) => line.custom_id).sort()).toEqual(['ok-1', 'ok-2', 'ok-3']);
    for (const line of output) {
      expect(line.id).toMatch(/^batch_req_/);
      expect(line.error).toBeNull();
      expect(line.response.status_code).toBe(200);
      expect(line.response.request_id).toMatch(new RegExp(`^${created.id}-\\d+$`));
      expect(line.response.body).toMatchObject({ object: 'chat.completion', model: 'openai/gpt-4o-mini' });
    }
    const errors = jsonl(await (await world.client.files.content(done.error_file_id as string)).text());
    expect(errors).toHaveLength(6);
    const byId = new Map(errors.map((line) => [line.custom_id, line]));
    expect(byId.get('unknown-model')?.response.status_code).toBe(404);
    expect(byId.get('wrong-url')?.error.message).toMatch(/^'url': must be \/v1\/chat\/completions/);
    expect(byId.get('bad-body')?.error.message).toMatch(/^'body.messages'/);
    expect(byId.get('ok-1')?.error.message).toMatch(/^'custom_id': 'ok-1' is used by an earlier line/);
    expect(errors.filter((line) => line.custom_id === null).map((l) => l.error.message)).toEqual([
      'line 3 is not valid JSON',
      "'custom_id': required, a non-empty string",
    ]);

    const outputFile = await world.client.files.retrieve(done.output_file_id as string);
    expect(outputFile).toMatchObject({ purpose: 'batch_output', filename: `${created.id}_output.jsonl` });

    // Each line charged once, marked as a batch line: with no batch API, the provider is paid in full, so the
    // discount is the fee's, and the line costs what the provider charged.
    const { rows } = await world.gateway.runtime.database.pool.query(
      `SELECT request_id, discount, pass_through_nanos::text AS pass, fee_nanos::text AS fee, charged_nanos::text AS charged
       FROM charges WHERE kind = 'settled' AND starts_with(request_id, $1)`,
      [`${created.id}-`],
    );
    expect(rows).toHaveLength(3);
    let total = 0n;
    for (const row of rows) {
      expect(row.discount).toBe('batch_fee');
      expect(BigInt(row.charged)).toBe(BigInt(row.pass));
      expect(BigInt(row.charged)).toBeGreaterThan(0n);
      total += BigInt(row.charged);
    }
    const usage = await eventually(
      async () =>
        json(
          await fetch(`${world.gateway.url}/v1/usage/by-tag`, {
            headers: { authorization: `Bearer ${world.key}` },
          }),
        ),
      (report) => report.data.some((row: { tag: string }) => row.tag === tag),
      3000,
    );
    expect(usage.data.find((row: { tag: string }) => row.tag === tag)).toMatchObject({
      requests: 3,
      cost_cents: Number(total) / 1e7,
    });

    const listed = await world.client.batches.list();
    expect(listed.data[0]?.id).toBe(created.id);
  });

  it('fails validation for a file that is not JSONL, with the reason in errors.data', async () => {
    const file = await world.upload('\u0089PNG\r\n\u001a\n binary junk \u0000\u0001\nmore junk');
    const created = await world.client.batches.create({
      input_file_id: file.id,
      endpoint: '/v1/chat/completions',
      completion_window: '24h',
    });
    const failed = await waitForStatus(world.client, created.id, (s) => s === 'failed');
    expect(failed.failed_at).toBeTypeOf('number');
    expect(failed.errors?.data?.[0]).toMatchObject({ code: 'invalid_file' });
    expect(failed.errors?.data?.[0]?.message).toMatch(/no line of the input file is a valid request/);
    expect(failed.errors?.data?.[1]).toMatchObject({ code: 'invalid_request', line: 1 });
    expect(failed.output_file_id).toBeNull();
  });

  it('fails validation for an empty file', async () => {
    const file = await world.upload('\n\n');
    const created = await world.client.batches.create({
      input_file_id: file.id,
      endpoint: '/v1/chat/completions',
      completion_window: '24h',
    });
    const failed = await waitForStatus(world.client, created.id, (s) => s === 'failed');
    expect(failed.errors?.data?.[0]).toMatchObject({ code: 'empty_file' });
  });

  it('refuses bad input in the error shape', async () => {
    const post = (body: unknown) =>
      fetch(`${world.gateway.url}/v1/batches`, {
        method: 'POST',
        headers: { authorization: `Bearer ${world.key}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    const file = await world.upload(chatLine('a', 'x'));
    const wrongEndpoint = await post({
      input_file_id: file.id,
      endpoint: '/v1/images',
      completion_window: '24h',
    });
    expect(wrongEndpoint.status).toBe(400);
    expect((await json(wrongEndpoint)).error).toMatchObject({ type: 'invalid_request_error', code: 400 });

    const window = await post({
      input_file_id: file.id,
      endpoint: '/v1/chat/completions',
      completion_window: '1h',
    });
    expect(window.status).toBe(400);
    expect((await json(window)).error.message).toMatch(/'completion_window'/);

    const missing = await post({
      input_file_id: 'file-nope',
      endpoint: '/v1/chat/completions',
      completion_window: '24h',
    });
    expect(missing.status).toBe(404);
    expect((await json(missing)).error.message).toMatch(/^'input_file_id': no file/);

    const notes = await world.client.files.create({
      file: new File(['hello'], 'notes.txt'),
      purpose: 'assistants',
    });
    const purpose = await post({
      input_file_id: notes.id,
      endpoint: '/v1/chat/completions',
      completion_window: '24h',
    });
    expect(purpose.status).toBe(400);
    expect((await json(purpose)).error.message).toMatch(/^'input_file_id': .* has purpose assistants/);

    await expect(world.client.batches.retrieve('batch_unknown')).rejects.toMatchObject({ status: 404 });
    await expect(world.client.batches.cancel('batch_unknown')).rejects.toMatchObject({ status: 404 });
  });

  it("keeps another account's batches and input files out of reach", async () => {
    const file = await world.upload(chatLine('a', 'x'));
    const other = await json(await world.gateway.admin('/accounts', { name: 'other' }));
    const stranger = world.clientFor(other.key);
    await expect(
      stranger.batches.create({
        input_file_id: file.id,
        endpoint: '/v1/chat/completions',
        completion_window: '24h',
      }),
    ).rejects.toMatchObject({ status: 404 });
    const batch = await world.client.batches.create({
      input_file_id: file.id,
      endpoint: '/v1/chat/completions',
      completion_window: '24h',
    });
    await expect(stranger.batches.retrieve(batch.id)).rejects.toMatchObject({ status: 404 });
    await expect(stranger.batches.cancel(batch.id)).rejects.toMatchObject({ status: 404 });
    expect((await stranger.batches.list()).data).toEqual([]);
    await waitForStatus(world.client, batch.id, (s) => s === 'completed');
  });
});
