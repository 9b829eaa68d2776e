import { randomUUID } from 'node:crypto';
import { type EventContext, parseAs, toNewEvent } from '../../events/index.ts';
import type { EventStore } from '../../events/store.ts';
import { type SubAccountEvent, subAccountStream } from '../../events/subaccount.ts';
import { type Decision, StreamWriter } from '../stream-writer.ts';
import { decide, evolve, initialState, type SubAccountCommand, type SubAccountState } from './decide.ts';

interface Contextual {
  command: SubAccountCommand;
  context: EventContext;
}

export class SubAccountCommands {
  private readonly writer: StreamWriter<SubAccountState, Contextual, SubAccountEvent>;

  constructor(store: EventStore) {
    this.writer = new StreamWriter(store, {
      initialState,
      evolve,
      decide: ({ command }, state) => decide(command, state),
      parse: (stored) => parseAs<SubAccountEvent>(stored),
      serialize: (event, { context }) => toNewEvent(event, randomUUID(), context),
    });
  }

  handle(
    subAccountId: string,
    command: SubAccountCommand,
    context: EventContext,
  ): Promise<Decision<SubAccountState, SubAccountEvent>> {
    return this.writer.submit(subAccountStream(subAccountId), { command, context });
  }
}
