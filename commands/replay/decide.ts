import type { z } from 'zod';
import type {
  ReplayCompleted,
  ReplayEvent,
  ReplayFailed,
  ReplayRequested,
  ShadowPaused,
  ShadowResumed,
  ShadowSampled,
} from '../../events/replay.ts';
import { DomainError } from '../errors.ts';

export type ReplayStatus = 'none' | 'running' | 'completed' | 'failed' | 'shadowing' | 'paused' | 'stopped';

export interface ReplayState {
  replayId: string;
  status: ReplayStatus;
  shadow: boolean;
  maxRequests: number;
  /** The later requests a shadow has compared: each at most once, across restarts. */
  sampled: Set<string>;
  /** How many times the shadow has been paused: the number of its latest pause, 0 for none. */
  pauses: number;
}

export function initialState(): ReplayState {
  return { replayId: '', status: 'none', shadow: false, maxRequests: 0, sampled: new Set(), pauses: 0 };
}

export function evolve(state: ReplayState, event: ReplayEvent): ReplayState {
  switch (event.type) {
    case 'ReplayRequested':
      return {
        ...state,
        replayId: event.data.replayId,
        status: 'running',
        shadow: event.data.shadow,
        maxRequests: event.data.maxRequests,
      };
    case 'ReplayCompleted':
      return { ...state, status: state.shadow ? 'shadowing' : 'completed' };
    case 'ReplayFailed':
      return { ...state, status: 'failed' };
    case 'ShadowSampled':
      return { ...state, sampled: new Set([...state.sampled, event.data.sourceRequestId]) };
    case 'ShadowStopped':
      return { ...state, status: 'stopped' };
    case 'ShadowPaused':
      return { ...state, status: 'paused', pauses: event.data.pause };
    case 'ShadowResumed':
      return state.status === 'paused' ? { ...state, status: 'shadowing' } : state;
    default: {
      const _exhaustive: never = event;
      return _exhaustive;
    }
  }
}

export type ReplayCommand =
  | { type: 'RequestReplay'; replay: z.infer<typeof ReplayRequested> }
  | { type: 'CompleteReplay'; result: z.infer<typeof ReplayCompleted> }
  | { type: 'FailReplay'; error: z.infer<typeof ReplayFailed>['error'] }
  | { type: 'RecordSample'; sample: z.infer<typeof ShadowSampled> }
  | { type: 'StopShadow' }
  | { type: 'PauseShadow'; refusal: Omit<z.infer<typeof ShadowPaused>, 'replayId' | 'pause'> }
  /** Ends pause number `pause`, and no later one: a resumption read again from the log changes nothing. */
  | { type: 'ResumeShadow'; pause: number; reason: z.infer<typeof ShadowResumed>['reason'] };

export function decide(command: ReplayCommand, state: ReplayState): ReplayEvent[] {
  if (command.type === 'RequestReplay') {
    return state.status === 'none' ? [{ type: 'ReplayRequested', data: command.replay }] : [];
  }
  if (state.status === 'none') throw new DomainError('not_found', 'No such replay');
  const replayId = state.replayId;
  switch (command.type) {
    case 'CompleteReplay':
      return state.status === 'running' ? [{ type: 'ReplayCompleted', data: command.result }] : [];
    case 'FailReplay':
      return state.status === 'running'
        ? [{ type: 'ReplayFailed', data: { replayId, error: command.error } }]
        : [];
    case 'RecordSample': {
      // A comparison that finishes after the shadow stopped, or a second time, is not counted; one that was paid
      // for before a pause is.
      const live = state.status === 'running' || state.status === 'shadowing' || state.status === 'paused';
      if (!state.shadow || !live || state.sampled.has(command.sample.sourceRequestId)) return [];
      const events: ReplayEvent[] = [{ type: 'ShadowSampled', data: command.sample }];
      if (state.sampled.size + 1 >= state.maxRequests) {
        events.push({ type: 'ShadowStopped', data: { replayId, reason: 'max_requests' } });
      }
      return events;
    }
    case 'StopShadow':
      if (!state.shadow)
        throw new DomainError('conflict', 'The replay is not a shadow; there is nothing to stop');
      return state.status === 'stopped' || state.status === 'failed'
        ? []
        : [{ type: 'ShadowStopped', data: { replayId, reason: 'deleted' } }];
    case 'PauseShadow':
      // Comparisons refused together pause the shadow once.
      return state.status === 'shadowing'
        ? [{ type: 'ShadowPaused', data: { replayId, pause: state.pauses + 1, ...command.refusal } }]
        : [];
    case 'ResumeShadow':
      return state.status === 'paused' && state.pauses === command.pause
        ? [{ type: 'ShadowResumed', data: { replayId, pause: command.pause, reason: command.reason } }]
        : [];
    default: {
      const _exhaustive: never = command;
      return _exhaustive;
    }
  }
}
