import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.ts';
import { chatLine, type FilesWorld, jsonl, startFilesWorld, waitForStatus } from './support.ts';

/** A chat completion as OpenAI sends it, with text no PostgreSQL column can hold. */
const completion = (content: string) => ({
  id: `chatcmpl-poison-${Math.random().toString(16).slice(2)}`,
  object: 'chat.completion',
  created: 1_700_000_000,
  model: 'gpt-4o-mini',
  choices: [{ index: 0, message: { role: 'assistant', content }, logprobs: null, finish_reason: 'stop' }],
  usage: { prompt_tokens: 5, completion_tokens: 4, total_tokens: 9 },
});

const POISONED = ['nul \u0000 inside', '\u0000', 'high \ud800 alone', 'low \udfff alone'];
const LINES = 12;

describe('a batch whose upstream results hold NUL bytes and unpaired surrogates', () => {
  let world: FilesWorld;
  beforeAll(async () => {
    world = await startFilesWorld();
  });
  afterAll(async () => world?.close());

  it('keeps every line in the output or error file, each charge with its line, and the audit passes', async () => {
    for (const content of POISONED)
      world.openai.script({ kind: 'error', status: 200, body: completion(content) });
    world.openai.script({
      kind: 'error',
      status: 400,
      body: { error: { message: 'upstream says \u0000 and \ud83d', type: 'invalid_request_error' } },
    });
    const input = Array.from({ length: LINES }, (_, i) => chatLine(`line-${i}`, `question ${i}`)).join('\n');
    const file = await world.upload(input);
    const created = await world.client.batches.create({
      input_file_id: file.id,
      endpoint: '/v1/chat/completions',
      completion_window: '24h',
    });
    const done = await waitForStatus(world.client, created.id, (s) => s === 'completed');

    const read = async (id: string | null | undefined) =>
      id ? await (await world.client.files.content(id)).text() : '';
    const outputText = await read(done.output_file_id);
    const output = jsonl(outputText);
    const errors = jsonl(await read(done.error_file_id));
    const ids = [...output, ...errors].map((line) => line.custom_id).sort();
    expect(ids).toEqual(Array.from({ length: LINES }, (_, i) => `line-${i}`).sort());
    expect(done.request_counts).toEqual({ total: LINES, completed: output.length, failed: errors.length });

    // The upstream's text survives exactly, as JSON escapes in the file.
    const contents = output.map((line) => line.response.body.choices[0].message.content);
    for (const poisoned of POISONED) expect(contents).toContain(poisoned);
    expect(outputText).toContain('\\u0000');
    expect(outputText).toContain('\\ud800');
    const upstreamError = errors.find((line) => line.response?.status_code >= 400);
    expect(JSON.stringify(upstreamError)).toMatch(/upstream says/);

    // Every charged line is in the output with its request id; nothing is charged without its result.
    const { rows } = await world.gateway.runtime.database.pool.query<{ request_id: string }>(
      `SELECT request_id FROM charges WHERE kind = 'settled' AND starts_with(request_id, $1)`,
      [`${created.id}-`],
    );
    const charged = rows.map((r) => r.request_id).sort();
    const answered = output.map((line) => line.response.request_id).sort();
    expect(charged).toEqual(answered);
    expect(charged).toHaveLength(LINES - 1);

    const audit = await runCli(['audit'], world.gateway.env);
    expect(audit.stdout).toContain('Result: PASS');
    expect(audit.code).toBe(0);
  });
});
