import { describe, expect, it } from 'vitest';
import type { EvalEvent } from '../../events/eval.ts';
import { DomainError } from '../errors.ts';
import { chargedSoFar, decide, type EvalCommand, evolve, initialState } from './decide.ts';

const created = {
  evalId: 'evl_1',
  accountId: 'acct_1',
  subAccountId: null,
  keyId: 'key_1',
  requestId: 'req_1',
  name: 'n',
  candidateModels: ['a/x', 'b/y'],
  metric: 'quality' as const,
  dataset: [{ input: 'q', expected: 'a' }],
  testingCriteria: null,
  maxTokens: null,
  tag: 'eval',
  judgeModel: null,
};

const scored = (model: string, run = 1) => ({
  evalId: 'evl_1',
  run,
  item: 0,
  model,
  requestId: `evl_1-${run}-0-${model}`,
  output: 'a',
  score: 1,
  grader: 'exact' as const,
  judge: { model: 'j/m', prompt: 'p', costNanos: '5' },
  costNanos: '100',
  latencyMs: 3,
  error: null,
  recovered: false,
});

function run(commands: EvalCommand[]) {
  let state = initialState();
  const all: EvalEvent[] = [];
  for (const command of commands) {
    const events = decide(command, state);
    all.push(...events);
    state = events.reduce(evolve, state);
  }
  return { state, events: all };
}

const result = {
  winnerModel: 'a/x',
  tie: false,
  tiedModels: [],
  reason: 'r',
  candidates: [],
  costNanos: '0',
};

describe('eval decider', () => {
  it('queued → running → completed, each answer once, the run complete only with every answer', () => {
    const start: EvalCommand[] = [{ type: 'CreateEval', created }, { type: 'StartRun' }];
    const early = run([...start, { type: 'RecordItem', scored: scored('a/x') }]);
    expect(() => decide({ type: 'CompleteRun', result }, early.state)).toThrow(DomainError);
    const { state, events } = run([
      ...start,
      { type: 'RecordItem', scored: scored('a/x') },
      { type: 'RecordItem', scored: scored('a/x') },
      { type: 'RecordItem', scored: scored('b/y') },
      { type: 'CompleteRun', result },
    ]);
    expect(events.map((e) => e.type)).toEqual([
      'EvalCreated',
      'EvalRunStarted',
      'EvalItemScored',
      'EvalItemScored',
      'EvalCompleted',
    ]);
    expect(state.status).toBe('completed');
    expect(chargedSoFar(state)).toBe(210n);
  });

  it('a restart starts the run again (a second take); a failure records what was charged', () => {
    const { state, events } = run([
      { type: 'CreateEval', created },
      { type: 'StartRun' },
      { type: 'RecordItem', scored: scored('a/x') },
      { type: 'StartRun' },
      { type: 'FailRun', error: { message: 'cap', type: 'budget_exceeded', code: 402 } },
      // Charged in flight when the run failed: still recorded.
      { type: 'RecordItem', scored: scored('b/y') },
    ]);
    expect(state.takes).toBe(2);
    expect(events.find((e) => e.type === 'EvalFailed')?.data).toMatchObject({ costNanos: '105' });
    expect(state.results.size).toBe(2);
  });

  it('cancel and rerun: a rerun of an unfinished run is a conflict; a rerun clears the answers', () => {
    const cancelled = run([{ type: 'CreateEval', created }, { type: 'StartRun' }, { type: 'CancelRun' }]);
    expect(cancelled.state.status).toBe('cancelled');
    expect(decide({ type: 'CancelRun' }, cancelled.state)).toEqual([]);
    const rerun = run([
      { type: 'CreateEval', created },
      { type: 'StartRun' },
      { type: 'RecordItem', scored: scored('a/x') },
      { type: 'CancelRun' },
      { type: 'Rerun', requestId: 'r2' },
    ]);
    expect(rerun.state).toMatchObject({ status: 'queued', run: 2, takes: 0 });
    expect(rerun.state.results.size).toBe(0);
    expect(() => decide({ type: 'Rerun', requestId: 'r3' }, rerun.state)).toThrow(DomainError);
    // An answer of the old run arriving late is not the new run's.
    expect(
      decide({ type: 'RecordItem', scored: scored('a/x', 1) }, { ...rerun.state, status: 'running' }),
    ).toEqual([]);
  });

  it('commands on an eval that does not exist are refused', () => {
    expect(() => decide({ type: 'StartRun' }, initialState())).toThrow(DomainError);
  });
});
