import { randomUUID } from 'node:crypto';
import { type AccountEvent, accountStream } from '../../events/account.ts';
import { deterministicEventId, type EventContext, parseEvent, toNewEvent } from '../../events/index.ts';
import { type EventStore, WrongExpectedRevisionError } from '../../events/store.ts';
import { type AccountCommand, decide } from './decide.ts';
import { type AccountState, evolve, initialState } from './state.ts';

const MAX_ATTEMPTS = 20;

export interface HandledCommand {
  events: AccountEvent[];
  state: AccountState;
}

/** Read the account's stream, fold it, decide, append at the revision read; on a conflict, do it again. */
export async function handleAccountCommand(
  store: EventStore,
  accountId: string,
  command: AccountCommand,
  context: EventContext,
): Promise<HandledCommand> {
  const stream = accountStream(accountId);
  for (let attempt = 1; ; attempt++) {
    const stored = await store.readStream(stream);
    let state = initialState();
    for (const event of stored) {
      const parsed = parseEvent(event);
      if (parsed.ok) state = evolve(state, parsed.event as AccountEvent);
    }
    const events = decide(command, state);
    if (events.length === 0) return { events, state };
    const revision = stored.length - 1;
    try {
      await store.append(
        stream,
        events.map((event) => toNewEvent(event, eventId(accountId, event), context)),
        revision < 0 ? 'no_stream' : revision,
      );
      return { events, state: events.reduce(evolve, state) };
    } catch (error) {
      if (!(error instanceof WrongExpectedRevisionError) || attempt >= MAX_ATTEMPTS) throw error;
    }
  }
}

/** A top-up retried by its payment reference must not be appended twice, even across streams of retries. */
function eventId(accountId: string, event: AccountEvent): string {
  if (event.type === 'AccountToppedUp')
    return deterministicEventId(`topup/${accountId}/${event.data.reference}`);
  return randomUUID();
}
