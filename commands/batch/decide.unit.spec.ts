import { describe, expect, it } from 'vitest';
import type { BatchEvent } from '../../events/batch.ts';
import { DomainError } from '../errors.ts';
import { type BatchCommand, decide, evolve, initialState } from './decide.ts';

const owner = { accountId: 'acct_1', subAccountId: null };
const created: BatchEvent = {
  type: 'BatchCreated',
  data: {
    batchId: 'batch_1',
    ...owner,
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
const line = {
  batchId: 'batch_1',
  line: 1,
  customId: 'a',
  requestId: 'batch_1-1',
  statusCode: 200,
  body: {},
  error: null,
  costNanos: '10',
};

const given = (...events: BatchEvent[]) => events.reduce(evolve, initialState());
const outcome = { outputFileId: null, errorFileId: null, completed: 0, failed: 2 };

describe('batch decider', () => {
  it('records a line once: a repeat (a retried record) appends nothing', () => {
    const state = given(created, validated, started);
    const record: BatchCommand = { type: 'RecordLine', line };
    expect(decide(record, state)).toEqual([{ type: 'BatchLineFinished', data: line }]);
    expect(
      decide(record, given(created, validated, started, { type: 'BatchLineFinished', data: line })),
    ).toEqual([]);
  });

  it('takes count up, so a resumed take is told apart from the first', () => {
    expect(decide({ type: 'StartBatch' }, given(created, validated, started))).toEqual([
      { type: 'BatchStarted', data: { batchId: 'batch_1', take: 2 } },
    ]);
  });

  it('refuses a cancel from another scope as not found, and a cancel of a finished batch as a conflict', () => {
    const state = given(created, validated);
    expect(() =>
      decide({ type: 'RequestCancel', owner: { accountId: 'acct_2', subAccountId: null } }, state),
    ).toThrow(DomainError);
    const done = given(
      created,
      validated,
      started,
      { type: 'BatchFinalizing', data: { batchId: 'batch_1' } },
      {
        type: 'BatchCompleted',
        data: { batchId: 'batch_1', ...outcome },
      },
    );
    expect(() => decide({ type: 'RequestCancel', owner }, done)).toThrow(/can no longer be cancelled/);
  });

  it('concludes a batch whose cancel was asked before its window ran out as cancelled', () => {
    const cancelling = given(created, validated, started, {
      type: 'BatchCancelRequested',
      data: { batchId: 'batch_1' },
    });
    expect(decide({ type: 'Conclude', as: 'expired', outcome }, cancelling)).toEqual([
      { type: 'BatchCancelled', data: { batchId: 'batch_1', ...outcome } },
    ]);
    expect(decide({ type: 'RequestCancel', owner }, cancelling)).toEqual([]);
  });

  it('validates only once', () => {
    expect(decide({ type: 'RecordValidation', total: 1, invalid: [] }, given(created, validated))).toEqual(
      [],
    );
    expect(decide({ type: 'FailValidation', errors: [] }, given(created, validated))).toEqual([]);
  });
});
