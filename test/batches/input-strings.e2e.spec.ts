import { afterAll, beforeAll, expect, it } from 'vitest';
import { chatLine, type FilesWorld, jsonl, startFilesWorld, waitForStatus } from './support.ts';

// A batch line is held to what the API's edge accepts of the same body: a string PostgreSQL cannot store, a
// prototype key, deep nesting or a shape past the edge's limits (refused before the line is parsed, so without its
// custom id) fails that line alone, with its reason in the error file; the others run.
let world: FilesWorld;
beforeAll(async () => {
  world = await startFilesWorld();
});
afterAll(async () => world?.close());

it('fails the lines holding unstorable strings, prototype keys, deep nesting or wide objects, and runs the rest', async () => {
  const input = [
    chatLine('clean', 'a clean question'),
    chatLine('nul', 'a\u0000b'),
    chatLine('surrogate', 'x \ud800 y'),
    chatLine('proto', 'x').replace('"max_tokens"', '"__proto__":{"polluted":true},"max_tokens"'),
    chatLine('deep', 'x', { metadata: JSON.parse(`${'{"a":'.repeat(70)}1${'}'.repeat(70)}`) }),
    chatLine('wide', 'x', {
      metadata: Object.fromEntries(Array.from({ length: 10_001 }, (_, i) => [`k${i}`, 'v'])),
    }),
  ].join('\n');
  const file = await world.upload(input);
  const batch = await world.client.batches.create({
    input_file_id: file.id,
    endpoint: '/v1/chat/completions',
    completion_window: '24h',
  });
  const done = await waitForStatus(world.client, batch.id, (s) => s === 'completed');
  expect(done.request_counts).toEqual({ total: 6, completed: 1, failed: 5 });
  const output = jsonl(await (await world.client.files.content(done.output_file_id as string)).text());
  expect(output.map((line) => line.custom_id)).toEqual(['clean']);
  const errors = jsonl(await (await world.client.files.content(done.error_file_id as string)).text());
  // Error lines come in no set order; a line refused before it was parsed has no custom id, its number names it.
  const reasons = errors.map((line) => [line.custom_id, line.error.message]);
  expect(reasons).toHaveLength(5);
  expect(reasons).toEqual(
    expect.arrayContaining([
      ['nul', "'body.messages.0.content': contains a NUL character or an unpaired surrogate"],
      ['surrogate', "'body.messages.0.content': contains a NUL character or an unpaired surrogate"],
      ['proto', "'body.__proto__': not accepted as a key"],
      [null, expect.stringMatching(/^line 5: 'body\.metadata(\.a)+': nested deeper than 64 levels$/)],
      [null, "line 6: 'body.metadata': more than 10000 keys in one object; the limit is 10000"],
    ]),
  );
});
