import { type CredentialEvent, credentialStream } from '../../events/credential.ts';
import { deterministicEventId, parseAs, toNewEvent } from '../../events/index.ts';
import type { EventStore } from '../../events/store.ts';
import { type Decision, StreamWriter } from '../stream-writer.ts';
import { type CredentialRefusals, decideRefusal, evolveRefusals, type RecordRefusal } from './decide.ts';

/**
 * Records refusals of the operator's credentials, one provider's stream at a time: another instance's append
 * surfaces as a revision conflict and the refusal is decided again on top of it, so that it is recorded once.
 */
export class CredentialCommands {
  private readonly writer: StreamWriter<CredentialRefusals, RecordRefusal, CredentialEvent>;

  constructor(store: EventStore) {
    this.writer = new StreamWriter(store, {
      initialState: (): CredentialRefusals => new Map(),
      evolve: evolveRefusals,
      decide: decideRefusal,
      parse: (stored) => parseAs<CredentialEvent>(stored),
      // The same refusal retried by this instance after a lost answer stores nothing twice.
      serialize: (event, command, stream) =>
        toNewEvent(
          event,
          deterministicEventId(
            `${stream}/${command.credential}/${command.reason}/${command.at.toISOString()}`,
          ),
          { now: command.at },
        ),
    });
  }

  recordRefusal(command: RecordRefusal): Promise<Decision<CredentialRefusals, CredentialEvent>> {
    return this.writer.submit(credentialStream(command.provider), command);
  }
}
