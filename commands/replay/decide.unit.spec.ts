import { describe, expect, it } from 'vitest';
import type { ReplayEvent } from '../../events/replay.ts';
import { DomainError } from '../errors.ts';
import { decide, evolve, initialState, type ReplayCommand } from './decide.ts';

const requested = (shadow: boolean, maxRequests = 2): ReplayEvent => ({
  type: 'ReplayRequested',
  data: {
    replayId: 'r1',
    accountId: 'acct_1',
    keyId: 'key_1',
    requestId: 'req_replay',
    sourceRequestId: 'req_1',
    sourceModel: 'openai/gpt-4o-mini',
    sourceTag: null,
    endpoint: '/v1/chat/completions',
    targetModel: 'anthropic/claude-3-5-haiku-latest',
    shadow,
    sampleRate: 1,
    maxRequests,
  },
});
const completed: ReplayEvent = {
  type: 'ReplayCompleted',
  data: {
    replayId: 'r1',
    targetRequestId: 'req_replay',
    sourceOutput: 'a',
    targetOutput: 'b',
    costSourceNanos: '10',
    costTargetNanos: '20',
    latencySourceMs: 1,
    latencyTargetMs: 2,
    scoreDelta: 0,
    scoring: 'similarity',
    judge: null,
  },
};
const sample = (sourceRequestId: string): ReplayCommand => ({
  type: 'RecordSample',
  sample: {
    replayId: 'r1',
    sourceRequestId,
    targetRequestId: `shadow-${sourceRequestId}`,
    costSourceNanos: '1',
    costTargetNanos: '2',
    judgeCostNanos: '0',
    latencySourceMs: 1,
    latencyTargetMs: 1,
    scoreDelta: 0.5,
    scoring: 'judge',
  },
});
const run = (events: ReplayEvent[], command: ReplayCommand) =>
  decide(command, events.reduce(evolve, initialState()));
const kind = (events: ReplayEvent[], command: ReplayCommand) => {
  try {
    run(events, command);
    return 'accepted';
  } catch (error) {
    return error instanceof DomainError ? error.kind : 'other';
  }
};

describe('replay decider', () => {
  it('records a request once and completes it once', () => {
    const first = requested(false);
    expect(run([], { type: 'RequestReplay', replay: first.data as never })).toEqual([first]);
    expect(run([first], { type: 'RequestReplay', replay: first.data as never })).toEqual([]);
    expect(run([first], { type: 'CompleteReplay', result: completed.data as never })).toEqual([completed]);
    expect(run([first, completed], { type: 'CompleteReplay', result: completed.data as never })).toEqual([]);
  });

  it('counts each mirrored request once, and stops by itself at max_requests', () => {
    const start = [requested(true, 2), completed];
    const one = run(start, sample('req_2'));
    expect(one.map((e) => e.type)).toEqual(['ShadowSampled']);
    const after = [...start, ...one];
    expect(run(after, sample('req_2'))).toEqual([]);
    expect(run(after, sample('req_3')).map((e) => e.type)).toEqual(['ShadowSampled', 'ShadowStopped']);
  });

  it('stops a shadow when deleted, ignores later samples, and refuses to stop a plain replay', () => {
    const start = [requested(true, 10), completed];
    const stop = run(start, { type: 'StopShadow' });
    expect(stop).toEqual([{ type: 'ShadowStopped', data: { replayId: 'r1', reason: 'deleted' } }]);
    expect(run([...start, ...stop], sample('req_9'))).toEqual([]);
    expect(run([...start, ...stop], { type: 'StopShadow' })).toEqual([]);
    expect(kind([requested(false), completed], { type: 'StopShadow' })).toBe('conflict');
    expect(kind([], { type: 'StopShadow' })).toBe('not_found');
  });

  it('pauses a shadow once for comparisons refused together, and resumes only the pause it names', () => {
    const start = [requested(true, 10), completed];
    const refusal = {
      reason: 'budget_exceeded' as const,
      message: 'Spend cap of sub-account sa_1 reached',
      sourceRequestId: 'req_2',
      triedAt: '2026-01-01T00:00:00.000Z',
    };
    const paused = run(start, { type: 'PauseShadow', refusal });
    expect(paused).toEqual([{ type: 'ShadowPaused', data: { replayId: 'r1', pause: 1, ...refusal } }]);
    const whilePaused = [...start, ...paused];
    expect(
      run(whilePaused, { type: 'PauseShadow', refusal: { ...refusal, sourceRequestId: 'req_3' } }),
    ).toEqual([]);
    // A comparison paid for before the pause is still counted.
    expect(run(whilePaused, sample('req_1')).map((e) => e.type)).toEqual(['ShadowSampled']);

    const resumed = run(whilePaused, { type: 'ResumeShadow', pause: 1, reason: 'cap_changed' });
    expect(resumed).toEqual([
      { type: 'ShadowResumed', data: { replayId: 'r1', pause: 1, reason: 'cap_changed' } },
    ]);
    const again = [
      ...whilePaused,
      ...resumed,
      ...run([...whilePaused, ...resumed], { type: 'PauseShadow', refusal }),
    ];
    expect(again.at(-1)).toMatchObject({ type: 'ShadowPaused', data: { pause: 2 } });
    // A top-up read again from the log after the first pause does not end the second.
    expect(run(again, { type: 'ResumeShadow', pause: 1, reason: 'topped_up' })).toEqual([]);
    expect(run(again, { type: 'ResumeShadow', pause: 2, reason: 'topped_up' })).toHaveLength(1);
    // Stopping a paused shadow stops it.
    expect(run(again, { type: 'StopShadow' })).toEqual([
      { type: 'ShadowStopped', data: { replayId: 'r1', reason: 'deleted' } },
    ]);
  });
});
