import type { OperatorCredentialEvent } from '../../events/credential.ts';
import { DomainError } from '../errors.ts';

/** An added credential's settings, as its events record them (no secret). */
export interface AddedSettings {
  weight: number;
  rpm: number | null;
  tpm: number | null;
  monthlySpendNanos: string | null;
}

/** The credentials of the stream's provider that the operator added and has not removed, by name. */
export type AddedCredentials = ReadonlyMap<string, AddedSettings>;

export type OperatorCredentialCommand =
  | ({ type: 'AddCredential'; provider: string; credential: string; last4: string } & AddedSettings)
  | ({ type: 'ChangeCredential'; provider: string; credential: string } & AddedSettings)
  | { type: 'RemoveCredential'; provider: string; credential: string };

export function evolveAdded(state: AddedCredentials, event: OperatorCredentialEvent): AddedCredentials {
  const next = new Map(state);
  switch (event.type) {
    case 'ProviderCredentialAdded':
    case 'ProviderCredentialChanged': {
      const { weight, rpm, tpm, monthlySpendNanos } = event.data;
      next.set(event.data.credential, { weight, rpm, tpm, monthlySpendNanos });
      return next;
    }
    case 'ProviderCredentialRemoved':
      next.delete(event.data.credential);
      return next;
    default: {
      const _exhaustive: never = event;
      return state;
    }
  }
}

const missing = (command: { provider: string; credential: string }) =>
  new DomainError(
    'not_found',
    `no credential '${command.credential}' was added to ${command.provider}'s pool`,
    'name',
  );

export function decideAdded(
  command: OperatorCredentialCommand,
  state: AddedCredentials,
): OperatorCredentialEvent[] {
  const { provider, credential } = command;
  switch (command.type) {
    case 'AddCredential': {
      if (state.has(credential))
        throw new DomainError(
          'conflict',
          `'name': ${provider}'s pool already has a credential '${credential}'`,
          'name',
        );
      const { weight, rpm, tpm, monthlySpendNanos, last4 } = command;
      const data = { provider, credential, weight, rpm, tpm, monthlySpendNanos, last4 };
      return [{ type: 'ProviderCredentialAdded', data }];
    }
    case 'ChangeCredential': {
      const now = state.get(credential);
      if (!now) throw missing(command);
      const { weight, rpm, tpm, monthlySpendNanos } = command;
      const same =
        now.weight === weight &&
        now.rpm === rpm &&
        now.tpm === tpm &&
        now.monthlySpendNanos === monthlySpendNanos;
      if (same) return [];
      return [
        {
          type: 'ProviderCredentialChanged',
          data: { provider, credential, weight, rpm, tpm, monthlySpendNanos },
        },
      ];
    }
    case 'RemoveCredential':
      if (!state.has(credential)) throw missing(command);
      return [{ type: 'ProviderCredentialRemoved', data: { provider, credential } }];
    default: {
      const _exhaustive: never = command;
      return [];
    }
  }
}
