import { randomUUID } from 'node:crypto';
import { type AccountEvent, accountStream } from '../../events/account.ts';
import { deterministicEventId, type EventContext, parseAs, toNewEvent } from '../../events/index.ts';
import type { EventStore } from '../../events/store.ts';
import { type Decision, StreamWriter } from '../stream-writer.ts';
import { type AccountCommand, decide } from './decide.ts';
import { type AccountState, evolve, initialState } from './state.ts';

interface ContextualCommand {
  command: AccountCommand;
  context: EventContext;
}

/** Account commands, decided and appended by one writer per account stream. */
export class AccountCommands {
  private readonly writer: StreamWriter<AccountState, ContextualCommand, AccountEvent>;

  constructor(store: EventStore) {
    this.writer = new StreamWriter(store, {
      initialState,
      evolve,
      decide: ({ command }, state) => decide(command, state),
      parse: (stored) => parseAs<AccountEvent>(stored),
      serialize: (event, { context }, stream) => toNewEvent(event, eventId(stream, event), context),
    });
  }

  handle(
    accountId: string,
    command: AccountCommand,
    context: EventContext,
  ): Promise<Decision<AccountState, AccountEvent>> {
    return this.writer.submit(accountStream(accountId), { command, context });
  }
}

/**
 * A top-up's id derives from its payment reference, a reversal's from the refunded total it brings the top-up
 * to, and a daily summary's from its day, so that none can be stored twice, whichever instance or retry writes it.
 */
function eventId(stream: string, event: AccountEvent): string {
  if (event.type === 'AccountToppedUp')
    return deterministicEventId(`${stream}/topup/${event.data.reference}`);
  if (event.type === 'AccountTopUpReversed')
    return deterministicEventId(`${stream}/reversal/${event.data.reference}/${event.data.refundedNanos}`);
  if (event.type === 'DailyUsageSummarized')
    return deterministicEventId(`${stream}/summary/${event.data.day}`);
  return randomUUID();
}
