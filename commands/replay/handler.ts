import { randomUUID } from 'node:crypto';
import { type EventContext, parseAs, toNewEvent } from '../../events/index.ts';
import { type ReplayEvent, replayStream } from '../../events/replay.ts';
import type { EventStore } from '../../events/store.ts';
import { type Decision, StreamWriter } from '../stream-writer.ts';
import { decide, evolve, initialState, type ReplayCommand, type ReplayState } from './decide.ts';

interface Contextual {
  command: ReplayCommand;
  context: EventContext;
}

export class ReplayCommands {
  private readonly writer: StreamWriter<ReplayState, Contextual, ReplayEvent>;

  constructor(store: EventStore) {
    this.writer = new StreamWriter(store, {
      initialState,
      evolve,
      decide: ({ command }, state) => decide(command, state),
      parse: (stored) => parseAs<ReplayEvent>(stored),
      serialize: (event, { context }) => toNewEvent(event, randomUUID(), context),
    });
  }

  handle(
    replayId: string,
    command: ReplayCommand,
    context: EventContext,
  ): Promise<Decision<ReplayState, ReplayEvent>> {
    return this.writer.submit(replayStream(replayId), { command, context });
  }
}
