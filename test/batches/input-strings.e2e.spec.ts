import { afterAll, beforeAll, expect, it } from 'vitest';
import { chatLine, type FilesWorld, jsonl, startFilesWorld, waitForStatus } from './support.ts';

// A batch line is held to what the API's edge accepts of the same body: a string PostgreSQL cannot store, a
// prototype key or deep nesting fails that line alone, with its reason in the error file; the others run.
let world: FilesWorld;
beforeAll(async () => {
  world = await startFilesWorld();
});
afterAll(async () => world?.close());

it('fails the lines holding unstorable strings, prototype keys or deep nesting, and runs the rest', async () => {
  const input = [
    chatLine('clean', 'a clean question'),
    chatLine('nul', 'a\u0000b'),
    chatLine('surrogate', 'x \ud800 y'),
    chatLine('proto', 'x').replace('"max_tokens"', '"__proto__":{"polluted":true},"max_tokens"'),
    chatLine('deep', 'x', { metadata: JSON.parse(`${'{"a":'.repeat(70)}1${'}'.repeat(70)}`) }),
  ].join('\n');
  const file = await world.upload(input);
  const batch = await world.client.batches.create({
    input_file_id: file.id,
    endpoint: '/v1/chat/completions',
    completion_window: '24h',
  });
  const done = await waitForStatus(world.client, batch.id, (s) => s === 'completed');
  expect(done.request_counts).toEqual({ total: 5, completed: 1, failed: 4 });
  const output = jsonl(await (await world.client.files.content(done.output_file_id as string)).text());
  expect(output.map((line) => line.custom_id)).toEqual(['clean']);
  const errors = jsonl(await (await world.client.files.content(done.error_file_id as string)).text());
  const reasons = Object.fromEntries(errors.map((line) => [line.custom_id, line.error.message]));
  expect(reasons).toEqual({
    nul: "'body.messages.0.content': contains a NUL character or an unpaired surrogate",
    surrogate: "'body.messages.0.content': contains a NUL character or an unpaired surrogate",
    proto: "'body.__proto__': not accepted as a key",
    deep: expect.stringMatching(/^'body\.metadata(\.a)+': nested deeper than 64 levels$/),
  });
});
