import type { z } from 'zod';
import type {
  BatchCreated,
  BatchEvent,
  BatchLineFinished,
  BatchProblem,
  BatchUpstreamEnded,
  BatchUpstreamPrepared,
  BatchValidated,
} from '../../events/batch.ts';
import { DomainError } from '../errors.ts';

export type BatchStatus =
  | 'validating'
  | 'queued'
  | 'in_progress'
  | 'finalizing'
  | 'completed'
  | 'failed'
  | 'expired'
  | 'cancelling'
  | 'cancelled';

export const TERMINAL: readonly BatchStatus[] = ['completed', 'failed', 'expired', 'cancelled'];

export interface BatchState {
  exists: boolean;
  created: z.infer<typeof BatchCreated> | undefined;
  status: BatchStatus;
  total: number;
  invalid: z.infer<typeof BatchValidated>['invalid'];
  /** Lines with a recorded result (1-based line numbers of the input file). */
  finished: Set<number>;
  succeeded: number;
  takes: number;
  /** Upstream batches (a provider's batch API), by the gateway's name for each. */
  groups: Map<string, UpstreamGroup>;
  /** Lines that belong to an upstream batch, and which. */
  grouped: Map<number, string>;
}

export interface UpstreamGroup {
  prepared: z.infer<typeof BatchUpstreamPrepared>;
  upstreamBatchId: string | null;
  ended: z.infer<typeof BatchUpstreamEnded> | null;
}

export function initialState(): BatchState {
  return {
    exists: false,
    created: undefined,
    status: 'validating',
    total: 0,
    invalid: [],
    finished: new Set(),
    succeeded: 0,
    takes: 0,
    groups: new Map(),
    grouped: new Map(),
  };
}

/** Mutates the finished-line set in place: a batch may record tens of thousands of lines. */
export function evolve(state: BatchState, event: BatchEvent): BatchState {
  switch (event.type) {
    case 'BatchCreated':
      return { ...state, exists: true, created: event.data, status: 'validating' };
    case 'BatchValidated':
      return { ...state, status: 'queued', total: event.data.total, invalid: event.data.invalid };
    case 'BatchStarted':
      return {
        ...state,
        takes: event.data.take,
        status: state.status === 'queued' ? 'in_progress' : state.status,
      };
    case 'BatchLineFinished': {
      if (state.finished.has(event.data.line)) return state;
      state.finished.add(event.data.line);
      return { ...state, succeeded: state.succeeded + (isSuccess(event.data.statusCode) ? 1 : 0) };
    }
    case 'BatchUpstreamPrepared': {
      if (state.groups.has(event.data.group)) return state;
      state.groups.set(event.data.group, { prepared: event.data, upstreamBatchId: null, ended: null });
      for (const line of event.data.lines) state.grouped.set(line.line, event.data.group);
      return { ...state };
    }
    case 'BatchUpstreamSubmitted': {
      const group = state.groups.get(event.data.group);
      if (group) group.upstreamBatchId = event.data.upstreamBatchId;
      return { ...state };
    }
    case 'BatchUpstreamEnded': {
      const group = state.groups.get(event.data.group);
      if (group) group.ended = event.data;
      return { ...state };
    }
    case 'BatchCancelRequested':
      return { ...state, status: 'cancelling' };
    case 'BatchFinalizing':
      return { ...state, status: 'finalizing' };
    case 'BatchCompleted':
      return { ...state, status: 'completed' };
    case 'BatchExpired':
      return { ...state, status: 'expired' };
    case 'BatchCancelled':
      return { ...state, status: 'cancelled' };
    case 'BatchFailed':
      return { ...state, status: 'failed' };
    default: {
      const _exhaustive: never = event;
      return _exhaustive;
    }
  }
}

export const isSuccess = (statusCode: number) => statusCode >= 200 && statusCode < 300;

export interface BatchOutcome {
  outputFileId: string | null;
  errorFileId: string | null;
  completed: number;
  failed: number;
}

export type BatchCommand =
  | { type: 'CreateBatch'; batch: z.infer<typeof BatchCreated> }
  | { type: 'RecordValidation'; total: number; invalid: z.infer<typeof BatchValidated>['invalid'] }
  | { type: 'FailValidation'; errors: z.infer<typeof BatchProblem>[] }
  | { type: 'StartBatch' }
  | { type: 'RecordLine'; line: z.infer<typeof BatchLineFinished> }
  | { type: 'PrepareUpstream'; prepared: z.infer<typeof BatchUpstreamPrepared> }
  | { type: 'RecordUpstreamSubmitted'; group: string; upstreamBatchId: string }
  | { type: 'RecordUpstreamEnded'; ended: z.infer<typeof BatchUpstreamEnded> }
  | { type: 'RequestCancel'; owner: { accountId: string; subAccountId: string | null } }
  | { type: 'Finalize' }
  | { type: 'Conclude'; as: 'completed' | 'expired' | 'cancelled'; outcome: BatchOutcome };

export function decide(command: BatchCommand, state: BatchState): BatchEvent[] {
  const batchId = state.created?.batchId ?? '';
  switch (command.type) {
    case 'CreateBatch':
      if (state.exists) throw new DomainError('conflict', `batch ${command.batch.batchId} already exists`);
      return [{ type: 'BatchCreated', data: command.batch }];
    case 'RecordValidation':
      if (state.status !== 'validating') return [];
      return [{ type: 'BatchValidated', data: { batchId, total: command.total, invalid: command.invalid } }];
    case 'FailValidation':
      if (state.status !== 'validating') return [];
      return [{ type: 'BatchFailed', data: { batchId, errors: command.errors } }];
    case 'StartBatch':
      if (state.status !== 'queued' && state.status !== 'in_progress') return [];
      return [{ type: 'BatchStarted', data: { batchId, take: state.takes + 1 } }];
    case 'RecordLine':
      if (state.finished.has(command.line.line)) return [];
      // A line that finishes while a cancel is pending was billed: it is kept, and goes into the output.
      if (state.status !== 'in_progress' && state.status !== 'cancelling') {
        throw new DomainError('conflict', `batch ${batchId} is ${state.status}: no line can finish now`);
      }
      return [{ type: 'BatchLineFinished', data: command.line }];
    case 'PrepareUpstream': {
      if (state.groups.has(command.prepared.group)) return [];
      if (state.status !== 'in_progress')
        throw new DomainError(
          'conflict',
          `batch ${batchId} is ${state.status}: no line can be submitted now`,
        );
      const taken = command.prepared.lines.find(
        (l) => state.grouped.has(l.line) || state.finished.has(l.line),
      );
      if (taken)
        throw new DomainError(
          'conflict',
          `line ${taken.line} of batch ${batchId} is already submitted or finished`,
        );
      return [{ type: 'BatchUpstreamPrepared', data: command.prepared }];
    }
    case 'RecordUpstreamSubmitted': {
      const group = state.groups.get(command.group);
      if (!group)
        throw new DomainError('conflict', `batch ${batchId} has no upstream batch ${command.group}`);
      if (group.upstreamBatchId !== null) return [];
      return [
        {
          type: 'BatchUpstreamSubmitted',
          data: { batchId, group: command.group, upstreamBatchId: command.upstreamBatchId },
        },
      ];
    }
    case 'RecordUpstreamEnded': {
      const group = state.groups.get(command.ended.group);
      if (!group)
        throw new DomainError('conflict', `batch ${batchId} has no upstream batch ${command.ended.group}`);
      if (group.ended !== null) return [];
      return [{ type: 'BatchUpstreamEnded', data: command.ended }];
    }
    case 'RequestCancel':
      requireOwned(state, command.owner);
      if (state.status === 'cancelling' || state.status === 'cancelled') return [];
      if (!['validating', 'queued', 'in_progress'].includes(state.status)) {
        throw new DomainError(
          'conflict',
          `batch ${batchId} is ${state.status} and can no longer be cancelled`,
        );
      }
      return [{ type: 'BatchCancelRequested', data: { batchId } }];
    case 'Finalize':
      if (state.status !== 'in_progress' && state.status !== 'queued') return [];
      return [{ type: 'BatchFinalizing', data: { batchId } }];
    case 'Conclude':
      return conclude(command, state, batchId);
    default: {
      const _exhaustive: never = command;
      return _exhaustive;
    }
  }
}

function conclude(
  command: Extract<BatchCommand, { type: 'Conclude' }>,
  state: BatchState,
  batchId: string,
): BatchEvent[] {
  if (TERMINAL.includes(state.status)) return [];
  const data = { batchId, ...command.outcome };
  switch (command.as) {
    case 'completed':
      if (state.status !== 'finalizing')
        throw new DomainError('conflict', `batch ${batchId} is not finalizing`);
      return [{ type: 'BatchCompleted', data }];
    case 'cancelled':
      if (state.status !== 'cancelling')
        throw new DomainError('conflict', `batch ${batchId} is not cancelling`);
      return [{ type: 'BatchCancelled', data }];
    case 'expired':
      // A cancel that was asked for first wins over the window running out.
      if (state.status === 'cancelling') return [{ type: 'BatchCancelled', data }];
      return [{ type: 'BatchExpired', data }];
    default: {
      const _exhaustive: never = command.as;
      return _exhaustive;
    }
  }
}

/** Another account's or sub-account's batch is simply not found. */
function requireOwned(state: BatchState, owner: { accountId: string; subAccountId: string | null }): void {
  if (
    !state.created ||
    state.created.accountId !== owner.accountId ||
    state.created.subAccountId !== owner.subAccountId
  ) {
    throw new DomainError('not_found', 'batch not found', 'batch_id');
  }
}
