import { describe, expect, it } from 'vitest';
import type { BatchEvent } from '../../events/batch.ts';
import { DomainError } from '../errors.ts';
import { type BatchCommand, decide, evolve, initialState } from './decide.ts';

const created: BatchEvent = {
  type: 'BatchCreated',
  data: {
    batchId: 'batch_1',
    accountId: 'acct_1',
    subAccountId: null,
    keyId: 'key_1',
    tag: null,
    inputFileId: 'file-1',
    endpoint: '/v1/chat/completions',
    completionWindow: '24h',
    metadata: null,
    expiresAt: '2026-11-23T00:00:00.000Z',
  },
};
const validated: BatchEvent = { type: 'BatchValidated', data: { batchId: 'batch_1', total: 2, invalid: [] } };
const started: BatchEvent = { type: 'BatchStarted', data: { batchId: 'batch_1', take: 1 } };
const prepared = {
  batchId: 'batch_1',
  group: 'batch_1/1',
  model: 'openai/gpt-4o-mini',
  provider: 'openai',
  lines: [{ line: 1, customId: 'a', holdId: 'hold_1', heldNanos: '100', maxTokens: 10 }],
};
const given = (...events: BatchEvent[]) => events.reduce(evolve, initialState());

describe('batch decider: upstream batches', () => {
  it('records a group once, and never puts a line in two groups', () => {
    const state = given(created, validated, started);
    const prepare: BatchCommand = { type: 'PrepareUpstream', prepared };
    const events = decide(prepare, state);
    expect(events.map((e) => e.type)).toEqual(['BatchUpstreamPrepared']);
    const after = given(created, validated, started, ...events);
    expect(after.grouped.get(1)).toBe('batch_1/1');
    expect(decide(prepare, after)).toEqual([]);
    const again: BatchCommand = { type: 'PrepareUpstream', prepared: { ...prepared, group: 'batch_1/2' } };
    expect(() => decide(again, after)).toThrow(DomainError);
  });

  it('records the provider id and the end once each', () => {
    const state = given(created, validated, started, { type: 'BatchUpstreamPrepared', data: prepared });
    const submitted: BatchCommand = {
      type: 'RecordUpstreamSubmitted',
      group: 'batch_1/1',
      upstreamBatchId: 'b1',
    };
    const events = decide(submitted, state);
    expect(events).toEqual([
      {
        type: 'BatchUpstreamSubmitted',
        data: { batchId: 'batch_1', group: 'batch_1/1', upstreamBatchId: 'b1' },
      },
    ]);
    const after = given(
      created,
      validated,
      started,
      { type: 'BatchUpstreamPrepared', data: prepared },
      ...events,
    );
    expect(after.groups.get('batch_1/1')?.upstreamBatchId).toBe('b1');
    expect(decide({ ...submitted, upstreamBatchId: 'b2' }, after)).toEqual([]);
    const ended: BatchCommand = {
      type: 'RecordUpstreamEnded',
      ended: { batchId: 'batch_1', group: 'batch_1/1', state: 'expired', message: null },
    };
    const end = decide(ended, after);
    expect(end.map((e) => e.type)).toEqual(['BatchUpstreamEnded']);
    expect(
      decide(
        ended,
        given(
          created,
          validated,
          started,
          { type: 'BatchUpstreamPrepared', data: prepared },
          ...events,
          ...end,
        ),
      ),
    ).toEqual([]);
  });

  it('refuses a group for a batch that is not running, and ids for a group it does not have', () => {
    expect(() => decide({ type: 'PrepareUpstream', prepared }, given(created, validated))).toThrow(
      DomainError,
    );
    expect(() =>
      decide(
        { type: 'RecordUpstreamSubmitted', group: 'nope', upstreamBatchId: 'b' },
        given(created, validated, started),
      ),
    ).toThrow(DomainError);
  });
});
