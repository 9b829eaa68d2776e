import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NewEvent } from '../../events/envelope.ts';
import { type ExpectedRevision, UnstorableEventError } from '../../events/store.ts';
import { runCli } from '../support/cli.ts';
import { chatLine, type FilesWorld, jsonl, startFilesWorld, waitForStatus } from './support.ts';

/**
 * Makes the store fail the first `times` appends that carry a given line's record (with `answersOnly`, only a
 * record of its answer, not of an error in its place).
 */
function failLine(
  world: FilesWorld,
  line: number,
  times: number,
  failure: (stream: string) => Error,
  answersOnly = false,
) {
  const store = world.gateway.runtime.store;
  const append = store.append.bind(store);
  let failed = 0;
  store.append = (stream: string, events: readonly NewEvent[], expected: ExpectedRevision) => {
    const hit = events.some((e) => {
      const data = e.data as { line: number; error: unknown };
      return e.type === 'BatchLineFinished' && data.line === line && (!answersOnly || data.error === null);
    });
    if (hit && failed < times) {
      failed += 1;
      return Promise.reject(failure(stream));
    }
    return append(stream, events, expected);
  };
  return () => {
    store.append = append;
  };
}

describe('a batch line whose result the store does not take', () => {
  let world: FilesWorld;
  beforeAll(async () => {
    world = await startFilesWorld();
  });
  afterAll(async () => world?.close());

  const run = async (lines: number) => {
    const input = Array.from({ length: lines }, (_, i) => chatLine(`line-${i + 1}`, `question ${i}`));
    const file = await world.upload(input.join('\n'));
    const created = await world.client.batches.create({
      input_file_id: file.id,
      endpoint: '/v1/chat/completions',
      completion_window: '24h',
    });
    const done = await waitForStatus(world.client, created.id, (s) => s === 'completed');
    const read = async (id: string | null | undefined) =>
      id ? jsonl(await (await world.client.files.content(id)).text()) : [];
    return { done, output: await read(done.output_file_id), errors: await read(done.error_file_id) };
  };

  it('puts a line whose result the store refuses in the error file, with its charge', async () => {
    // Refused every time, as content no store can keep is: refused once only, the line's answer could be let
    // through when it is tried alone after a group that held it was refused and halved.
    const restore = failLine(
      world,
      2,
      Number.POSITIVE_INFINITY,
      (stream) => new UnstorableEventError(stream, 'refused'),
      true,
    );
    try {
      const { output, errors } = await run(3);
      expect(output.map((l) => l.custom_id).sort()).toEqual(['line-1', 'line-3']);
      expect(errors).toHaveLength(1);
      expect(errors[0]).toMatchObject({ custom_id: 'line-2', error: { code: 'result_not_recorded' } });
      expect(errors[0].error.message).toMatch(/could not be recorded .* it was charged/);
    } finally {
      restore();
    }
    const audit = await runCli(['audit'], world.gateway.env);
    expect(audit.stdout).toMatch(/^PASS +batch lines /m);
    expect(audit.code).toBe(0);
  });

  it('records a line again when the store blinks, losing no answer', async () => {
    const restore = failLine(world, 3, 2, () => new Error('connection terminated'));
    try {
      const { output, errors } = await run(4);
      expect(output.map((l) => l.custom_id).sort()).toEqual(['line-1', 'line-2', 'line-3', 'line-4']);
      expect(errors).toEqual([]);
    } finally {
      restore();
    }
  });

  it('does not finish the batch while a line is unrecorded: the next take records it, with its charge', async () => {
    const restore = failLine(world, 3, 4, () => new Error('connection terminated'));
    try {
      const { output, errors } = await run(4);
      const ids = [...output, ...errors].map((l) => l.custom_id).sort();
      expect(ids).toEqual(['line-1', 'line-2', 'line-3', 'line-4']);
      // Lines appended in one group with line 3 may share its fate; each is in the error file as lost.
      expect(errors.map((l) => l.custom_id)).toContain('line-3');
      for (const lost of errors) expect(lost.error.code).toBe('result_lost');
    } finally {
      restore();
    }
    const audit = await runCli(['audit'], world.gateway.env);
    expect(audit.stdout).toMatch(/^PASS +batch lines /m);
    expect(audit.code).toBe(0);
  });
});
