import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NewEvent } from '../../events/envelope.ts';
import type { ExpectedRevision } from '../../events/store.ts';
import { runCli } from '../support/cli.ts';
import { eventually } from '../support/gateway.ts';
import { type Json, json } from '../support/json.ts';
import { chatLine, type FilesWorld, jsonl, startFilesWorld, waitForStatus } from './support.ts';

/**
 * Issue 30: a batch line is known by the request id the gateway gives it (`<batch id>-<line>`), which no client's
 * `X-Request-Id` can be (item 3); and a sub-account's batch lines are its own in the request log, as the batch and
 * its files are (item 6).
 */
let world: FilesWorld;

beforeAll(async () => {
  // One line at a time: a take stopped by a line it could not record has not started the lines after the next.
  world = await startFilesWorld({ GATEWAY_BATCH_CONCURRENCY: '1' });
});
afterAll(async () => world?.close());

const v1 = async (key: string, path: string, init: RequestInit = {}) => {
  const response = await fetch(`${world.gateway.url}/v1${path}`, {
    ...init,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...init.headers },
  });
  return { status: response.status, headers: response.headers, body: await json(response) };
};

/**
 * Fails every append of line `line`'s record `times` times, the first only once `before` has settled: the take
 * stops with that line charged and unrecorded, and the next take resumes the batch from its charges.
 */
function failLineAfter(line: number, times: number, before: Promise<unknown>): () => void {
  const store = world.gateway.runtime.store;
  const append = store.append.bind(store);
  let failed = 0;
  store.append = async (stream: string, events: readonly NewEvent[], expected: ExpectedRevision) => {
    const hit = events.some(
      (e) => e.type === 'BatchLineFinished' && (e.data as { line: number }).line === line,
    );
    if (hit && failed < times) {
      failed += 1;
      await before;
      throw new Error('connection terminated');
    }
    return append(stream, events, expected);
  };
  return () => {
    store.append = append;
  };
}

describe("a chat sent with a batch line's id as its X-Request-Id", () => {
  it('is not taken for the line when a take resumes: the line runs, and the chat stays apart', async () => {
    const file = await world.upload(
      [chatLine('line-1', 'one'), chatLine('line-2', 'two'), chatLine('line-3', 'three')].join('\n'),
    );
    let planted!: (value: unknown) => void;
    const plantedDone = new Promise((resolve) => {
      planted = resolve;
    });
    const restore = failLineAfter(1, 4, plantedDone);
    try {
      const created = await world.client.batches.create({
        input_file_id: file.id,
        endpoint: '/v1/chat/completions',
        completion_window: '24h',
      });
      const forged = `${created.id}-3`;
      const chat = await v1(world.key, '/chat/completions', {
        method: 'POST',
        headers: { 'x-request-id': forged },
        body: JSON.stringify({
          model: 'openai/gpt-4o-mini',
          messages: [{ role: 'user', content: 'planted' }],
        }),
      });
      planted(undefined);
      expect(chat.status).toBe(200);
      expect(chat.headers.get('x-request-id')).toBe(forged);
      const chatId = chat.headers.get('x-gw-request-id') as string;
      expect(chatId).not.toBe(forged);

      const done = await waitForStatus(world.client, created.id, (s) => s === 'completed');
      const output = jsonl(await (await world.client.files.content(done.output_file_id as string)).text());
      const errors = jsonl(await (await world.client.files.content(done.error_file_id as string)).text());
      // Line 1 was charged and its record lost: recorded so, not run again. Line 3 never ran before the stop: it
      // runs now, and is not recorded with the planted chat's charge.
      expect(errors.map((l) => [l.custom_id, l.error?.code])).toEqual([['line-1', 'result_lost']]);
      expect(output.map((l) => l.custom_id).sort()).toEqual(['line-2', 'line-3']);
      const line3 = output.find((l) => l.custom_id === 'line-3');
      expect(line3.response.request_id).toBe(forged);

      // The line's id names the line's request; the chat is found by its client's id, and keeps its own.
      const byId = await eventually(
        async () => (await v1(world.key, `/requests/${forged}`)).body,
        (r) => r.batch_id === created.id,
        5000,
      );
      expect(byId).toMatchObject({ id: forged, batch_id: created.id, client_request_id: null });
      const listed = (await v1(world.key, `/requests?client_request_id=${forged}`)).body;
      expect(listed.data.map((r: Json) => [r.id, r.batch_id, r.client_request_id])).toEqual([
        [chatId, null, forged],
      ]);
    } finally {
      restore();
    }
    const audit = await runCli(['audit'], world.gateway.env);
    expect(audit.stdout).toMatch(/^PASS +batch lines /m);
    expect(audit.code).toBe(0);
  });
});

describe("a sub-account's batch lines in the request log", () => {
  it('are its own, as its batch and files are: 404 to the main key, listed and replayed only by it', async () => {
    const sub = await v1(world.key, '/sub-accounts', {
      method: 'POST',
      body: JSON.stringify({ name: 'batching customer', spend_cap_cents: 1_000 }),
    });
    expect(sub.status).toBe(200);
    const subKey = sub.body.key as string;
    const subClient = world.clientFor(subKey);
    const file = await world.upload(chatLine('only', 'a customer line'), subClient);
    const created = await subClient.batches.create({
      input_file_id: file.id,
      endpoint: '/v1/chat/completions',
      completion_window: '24h',
    });
    const done = await waitForStatus(subClient, created.id, (s) => s === 'completed');
    const lineId = `${created.id}-1`;
    const own = await eventually(
      async () => v1(subKey, `/requests/${lineId}`),
      (r) => r.status === 200,
      5000,
    );
    expect(own.body).toMatchObject({ id: lineId, batch_id: created.id, sub_account_id: sub.body.id });
    expect((await v1(subKey, '/requests')).body.data.map((r: Json) => r.id)).toContain(lineId);

    // The main key: the batch, its files and its line are all as missing.
    const main = world.key;
    expect((await v1(main, `/batches/${created.id}`)).status).toBe(404);
    expect((await v1(main, `/files/${done.output_file_id}/content`)).status).toBe(404);
    expect((await v1(main, `/files/${file.id}`)).status).toBe(404);
    const read = await v1(main, `/requests/${lineId}`);
    expect(read.status).toBe(404);
    expect(read.body.error.message).toBe(`No request ${lineId}`);
    const listed = await v1(main, `/requests?sub_account_id=${sub.body.id}&limit=100`);
    expect(listed.body.data.map((r: Json) => r.id)).not.toContain(lineId);
    const replayed = await v1(main, '/replays', {
      method: 'POST',
      body: JSON.stringify({ source_request_id: lineId, target_model: 'openai/gpt-4o-mini' }),
    });
    expect(replayed.status).toBe(404);

    // Its sub-account's other requests stay the main key's to read.
    const chat = await v1(subKey, '/chat/completions', {
      method: 'POST',
      body: JSON.stringify({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'direct' }] }),
    });
    const chatId = chat.headers.get('x-request-id') as string;
    expect(
      (
        await eventually(
          () => v1(main, `/requests/${chatId}`),
          (r) => r.status === 200,
          5000,
        )
      ).body,
    ).toMatchObject({ id: chatId, sub_account_id: sub.body.id, batch_id: null });
  });
});
