import { randomUUID } from 'node:crypto';
import { type EvalEvent, evalStream } from '../../events/eval.ts';
import { type EventContext, parseAs, toNewEvent } from '../../events/index.ts';
import type { EventStore } from '../../events/store.ts';
import { type Decision, StreamWriter } from '../stream-writer.ts';
import { decide, type EvalCommand, type EvalState, evolve, initialState } from './decide.ts';

interface Contextual {
  command: EvalCommand;
  context: EventContext;
}

export class EvalCommands {
  private readonly writer: StreamWriter<EvalState, Contextual, EvalEvent>;

  constructor(store: EventStore) {
    this.writer = new StreamWriter(store, {
      initialState,
      evolve,
      decide: ({ command }, state) => decide(command, state),
      parse: (stored) => parseAs<EvalEvent>(stored),
      serialize: (event, { context }) => toNewEvent(event, randomUUID(), context),
    });
  }

  handle(
    evalId: string,
    command: EvalCommand,
    context: EventContext,
  ): Promise<Decision<EvalState, EvalEvent>> {
    return this.writer.submit(evalStream(evalId), { command, context });
  }
}
