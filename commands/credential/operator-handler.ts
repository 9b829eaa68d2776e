import { randomUUID } from 'node:crypto';
import { credentialStream, type OperatorCredentialEvent } from '../../events/credential.ts';
import { type EventContext, parseAs, toNewEvent } from '../../events/index.ts';
import type { EventStore } from '../../events/store.ts';
import { type Decision, StreamWriter } from '../stream-writer.ts';
import {
  type AddedCredentials,
  decideAdded,
  evolveAdded,
  type OperatorCredentialCommand,
} from './operator.ts';

interface ContextualCommand {
  command: OperatorCredentialCommand;
  context: EventContext;
}

const OPERATOR_TYPES: ReadonlySet<string> = new Set([
  'ProviderCredentialAdded',
  'ProviderCredentialChanged',
  'ProviderCredentialRemoved',
]);

/**
 * The operator's additions, changes and removals of credentials, on the provider's `credential-` stream beside the
 * providers' refusals (which this writer reads past): instances decide one after the other at its revision, so a
 * name is added once.
 */
export class OperatorCredentialCommands {
  private readonly writer: StreamWriter<AddedCredentials, ContextualCommand, OperatorCredentialEvent>;

  constructor(store: EventStore) {
    this.writer = new StreamWriter(store, {
      initialState: (): AddedCredentials => new Map(),
      evolve: evolveAdded,
      decide: ({ command }, state) => decideAdded(command, state),
      parse: (stored) =>
        OPERATOR_TYPES.has(stored.type) ? parseAs<OperatorCredentialEvent>(stored) : undefined,
      // The decider refuses a repeated name and the removal of a removed credential: random ids are safe.
      serialize: (event, { context }) => toNewEvent(event, randomUUID(), context),
    });
  }

  handle(
    command: OperatorCredentialCommand,
    context: EventContext,
  ): Promise<Decision<AddedCredentials, OperatorCredentialEvent>> {
    return this.writer.submit(credentialStream(command.provider), { command, context });
  }
}
