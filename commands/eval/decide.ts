import type { z } from 'zod';
import type {
  EvalCompleted,
  EvalCreated,
  EvalEvent,
  EvalItemScored,
  EvalRunError,
} from '../../events/eval.ts';
import { DomainError } from '../errors.ts';

export type EvalStatus = 'none' | 'queued' | 'running' | 'completed' | 'failed' | 'cancelled';

/** What the winner is computed from: one candidate's answer to one item. */
export interface ItemResult {
  item: number;
  model: string;
  score: number | null;
  costNanos: bigint;
  judgeCostNanos: bigint;
  latencyMs: number;
  failed: boolean;
}

export interface EvalState {
  evalId: string;
  status: EvalStatus;
  created: z.infer<typeof EvalCreated> | undefined;
  /** The current run, from 1. */
  run: number;
  /** How often the current run was started: more than once means it is being resumed. */
  takes: number;
  /** The current run's recorded answers, by `${item}:${model}`. */
  results: Map<string, ItemResult>;
}

export const resultKey = (item: number, model: string) => `${item}:${model}`;

export function initialState(): EvalState {
  return { evalId: '', status: 'none', created: undefined, run: 0, takes: 0, results: new Map() };
}

export function evolve(state: EvalState, event: EvalEvent): EvalState {
  switch (event.type) {
    case 'EvalCreated':
      return { ...state, evalId: event.data.evalId, created: event.data, status: 'queued', run: 1 };
    case 'EvalRerunRequested':
      return { ...state, status: 'queued', run: event.data.run, takes: 0, results: new Map() };
    case 'EvalRunStarted':
      return { ...state, status: 'running', takes: state.takes + 1 };
    case 'EvalItemScored': {
      // In place: a run records up to 20,000 answers, and copying the map for each would be quadratic.
      const d = event.data;
      state.results.set(resultKey(d.item, d.model), {
        item: d.item,
        model: d.model,
        score: d.score,
        costNanos: BigInt(d.costNanos),
        judgeCostNanos: BigInt(d.judge?.costNanos ?? '0'),
        latencyMs: d.latencyMs,
        failed: d.error !== null,
      });
      return state;
    }
    case 'EvalCompleted':
      return { ...state, status: 'completed' };
    case 'EvalFailed':
      return { ...state, status: 'failed' };
    case 'EvalCancelled':
      return { ...state, status: 'cancelled' };
    default: {
      const _exhaustive: never = event;
      return _exhaustive;
    }
  }
}

export type EvalCommand =
  | { type: 'CreateEval'; created: z.infer<typeof EvalCreated> }
  | { type: 'StartRun' }
  | { type: 'RecordItem'; scored: z.infer<typeof EvalItemScored> }
  | {
      type: 'CompleteRun';
      result: Omit<z.infer<typeof EvalCompleted>, 'evalId' | 'accountId' | 'run' | 'name' | 'metric'>;
    }
  | { type: 'FailRun'; error: z.infer<typeof EvalRunError> }
  | { type: 'CancelRun' }
  | { type: 'Rerun'; requestId: string }
  /** Decides nothing: the caller reads the state it returns. */
  | { type: 'Inspect' };

/** What the current run's recorded answers were charged, grading included. */
export function chargedSoFar(state: EvalState): bigint {
  let total = 0n;
  for (const result of state.results.values()) total += result.costNanos + result.judgeCostNanos;
  return total;
}

const unfinished = (status: EvalStatus) => status === 'queued' || status === 'running';

export function decide(command: EvalCommand, state: EvalState): EvalEvent[] {
  if (command.type === 'CreateEval') {
    return state.status === 'none' ? [{ type: 'EvalCreated', data: command.created }] : [];
  }
  const created = state.created;
  if (state.status === 'none' || !created) throw new DomainError('not_found', 'No such eval');
  const { evalId, run } = state;
  switch (command.type) {
    case 'StartRun':
      return unfinished(state.status) ? [{ type: 'EvalRunStarted', data: { evalId, run } }] : [];
    case 'RecordItem': {
      // An answer that arrives after the run stopped (failed, cancelled) is still recorded: it was charged.
      const { scored } = command;
      const fresh =
        scored.run === run &&
        state.status !== 'queued' &&
        state.status !== 'completed' &&
        !state.results.has(resultKey(scored.item, scored.model));
      return fresh ? [{ type: 'EvalItemScored', data: scored }] : [];
    }
    case 'CompleteRun': {
      if (state.status !== 'running') return [];
      const expected = created.dataset.length * created.candidateModels.length;
      if (state.results.size < expected) {
        throw new DomainError('conflict', `The run has ${state.results.size} of ${expected} answers`);
      }
      const { accountId, name, metric } = created;
      return [{ type: 'EvalCompleted', data: { ...command.result, evalId, accountId, run, name, metric } }];
    }
    case 'FailRun':
      return unfinished(state.status)
        ? [
            {
              type: 'EvalFailed',
              data: {
                evalId,
                accountId: created.accountId,
                run,
                name: created.name,
                error: command.error,
                costNanos: chargedSoFar(state).toString(),
              },
            },
          ]
        : [];
    case 'Inspect':
      return [];
    case 'CancelRun':
      return unfinished(state.status) ? [{ type: 'EvalCancelled', data: { evalId, run } }] : [];
    case 'Rerun':
      if (unfinished(state.status)) {
        throw new DomainError(
          'conflict',
          `Eval '${evalId}' is still ${state.status}; cancel it or wait for it to end`,
        );
      }
      return [{ type: 'EvalRerunRequested', data: { evalId, run: run + 1, requestId: command.requestId } }];
    default: {
      const _exhaustive: never = command;
      return _exhaustive;
    }
  }
}
